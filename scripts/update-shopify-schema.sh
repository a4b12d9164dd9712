#!/usr/bin/env bash
# Fetch Shopify's Admin GraphQL introspection for one API version from the npm package @shopify/dev-mcp
# (Shopify publishes it there) into shopify-schema/. Usage: scripts/update-shopify-schema.sh 2026-07 [dev-mcp version]
set -euo pipefail
version="${1:?API version, for example 2026-07}"
package="@shopify/dev-mcp@${2:-latest}"
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "$package" >/dev/null)
tar -C "$work" -xzf "$work"/*.tgz "package/dist/data/admin_${version}.json.gz"
cp "$work/package/dist/data/admin_${version}.json.gz" "$root/shopify-schema/"
echo "shopify-schema/admin_${version}.json.gz from $package"
