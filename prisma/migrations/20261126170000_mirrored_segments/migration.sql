-- Shopify customer segments mirrored as contact tags (issue 31). Additive only.
CREATE TABLE "MirroredSegment" (
    "shop" TEXT NOT NULL,
    "segmentId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "tag" TEXT NOT NULL,
    "pickedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "MirroredSegment_pkey" PRIMARY KEY ("shop","segmentId")
);
