/**
 * products/create|update|delete, per delivery: what the marketing service learns of a product
 * (docs/event-mapping.md, Product events) and when it is told a product is gone. Shopify's sample
 * (test/fixtures/shopify-webhooks/products.create.json: "Example T-Shirt", two variants at 19.99).
 */
import { describe, expect, it } from "vitest";
import type { ObjectSyncState } from "../../app/sync/plan-contract";
import { htmlToText } from "../../app/sync/mappers/products";
import { eventOf, fixture, makeCtx, NOW, ops, run, type Json } from "../sync/fixtures";

const sample = (over: Record<string, Json> = {}) => ({ ...fixture("products/create"), ...over });
const product = (advertised: boolean, deleted = false): ObjectSyncState => ({ kind: "product", advertised, deleted });
const created = (over: Record<string, Json> = {}, ctx = makeCtx()) => eventOf(run("products/create", sample(over), ctx), "product", "created");
const variant = (over: Record<string, Json>) => ({ id: 1, price: "10.00", sku: null, barcode: null, option1: null, option2: null, option3: null, ...over });

describe("a live product", () => {
  it("is announced with everything a product card shows, attributed to the store", () => {
    const plan = run("products/create", sample(), makeCtx({ shopDomain: " Acme.MyShopify.com " }));
    expect(plan.objectKey).toBe("product:788032119674292922");
    expect(plan.objectUpdatedAt).toBe("2022-01-01T00:00:00.000Z");
    expect(plan.nextState).toEqual({ kind: "product", advertised: true, deleted: false });
    expect(plan.skipped).toBeUndefined();
    // The body itself is pinned in test/sync/golden.test.ts; the shop's domain is written clean.
    const body = eventOf(plan, "product", "created");
    expect(body).toEqual(eventOf(run("products/create", sample()), "product", "created"));
    expect(body.referenceId).toBe("shop:acme.myshopify.com");
  });

  it("of a legacy payload without a status counts as active", () => {
    const { status: _dropped, ...legacy } = fixture("products/create");
    expect(ops(run("products/create", legacy))).toEqual(["product/created"]);
  });

  it("updated while advertised (or never seen) is product/updated; after a withdrawal it is created again", () => {
    expect(ops(run("products/update", sample()))).toEqual(["product/updated"]);
    expect(ops(run("products/update", sample(), makeCtx({ prior: product(true) })))).toEqual(["product/updated"]);
    expect(ops(run("products/update", sample(), makeCtx({ prior: product(false) })))).toEqual(["product/created"]);
    expect(ops(run("products/create", sample(), makeCtx({ prior: product(true) })))).toEqual(["product/created"]);
  });

  it("of a single-variant product carries that variant's sku, barcode and id; options drop placeholders", () => {
    const body = created({ variants: [variant({ id: 5, sku: "SKU-5", barcode: "0123", option1: "Default Title", option2: "  ", option3: "Blue" })] });
    expect(body).toMatchObject({ sku: "SKU-5", barcode: "0123", variant_id: "5" });
    expect(body.variants).toEqual([{ id: "5", sku: "SKU-5", barcode: "0123", price: 10, options: ["Blue"] }]);
    const two = created({ variants: [variant({ id: 5, sku: "A", barcode: "1" }), variant({ id: 6, sku: "B", barcode: "2", option1: "L", option2: "Red", option3: "Silk" })] });
    expect(two).not.toHaveProperty("sku");
    expect(two).not.toHaveProperty("barcode");
    expect(two).not.toHaveProperty("variant_id");
    expect(two.variants[1].options).toEqual(["L", "Red", "Silk"]);
  });

  it("lists only variants with an id", () => {
    const body = created({ variants: [variant({ id: null, price: "1.00" }), variant({ id: 7 })] });
    expect(body.variants.map((v: Json) => v.id)).toEqual(["7"]);
  });

  it("costs its cheapest priced variant, compared exactly, first of equals kept", () => {
    const prices = (...p: Array<string | null>) => created({ variants: p.map((price, i) => variant({ id: i + 1, price })) }).price;
    expect(prices("20.00", "9.99", "15.00")).toBe(9.99);
    expect(prices(null, "12.00", null, "11.50")).toBe(11.5);
    expect(prices("7.00", "7.0")).toBe(7);
    expect(created({ variants: [variant({ price: null })] })).not.toHaveProperty("price");
    expect(created({ variants: [] })).not.toHaveProperty("price");
  });

  it("is priced in the shop's currency (whole yen), none when the shop has none", () => {
    expect(created({}, makeCtx({ currency: "JPY" }))).toMatchObject({ price: 20, currency: "JPY" });
    const none = created({}, makeCtx({ currency: undefined }));
    expect(none).not.toHaveProperty("currency");
    expect(none.price).toBe(19.99);
  });

  it("takes its image from `image`, else the first image that has a source", () => {
    expect(created({ images: [{ src: null }, { src: "https://cdn.example/2.jpg" }] }).image_url).toBe("https://cdn.example/2.jpg");
    expect(created({ image: { src: "https://cdn.example/main.jpg" }, images: [{ src: "https://cdn.example/2.jpg" }] }).image_url).toBe("https://cdn.example/main.jpg");
    expect(created({ images: [{ src: null }] })).not.toHaveProperty("image_url");
  });

  it("is filed under its type and its taxonomy category (full name, else name, or a legacy string), once each", () => {
    expect(created({ category: { name: "Shirts", full_name: null } }).categories).toEqual(["Shirts"]);
    expect(created({ category: { name: "Tops", full_name: null } }).categories).toEqual(["Shirts", "Tops"]);
    expect(created({ category: { name: "Tops", full_name: "Apparel > Tops" } }).categories).toEqual(["Shirts", "Apparel > Tops"]);
    expect(created({ category: "Legacy", product_type: "  " }).categories).toEqual(["Legacy"]);
    expect(created({ category: { name: null, full_name: null }, product_type: null }).categories).toEqual([]);
  });

  it("without tags, handle or description sends empty tags and no url", () => {
    const body = created({ tags: null, handle: null, body_html: null });
    expect(body.tags).toEqual([]);
    expect(body).not.toHaveProperty("url");
    expect(body).not.toHaveProperty("public_id");
    expect(body).not.toHaveProperty("description");
  });
});

describe("a product that is not live", () => {
  it("created as a draft sends nothing and says why", () => {
    const plan = run("products/create", sample({ status: "DRAFT" }));
    expect(plan.calls).toEqual([]);
    expect(plan.skipped).toBe("product is not live (status draft, published): not advertised");
    expect(plan.nextState).toEqual({ kind: "product", advertised: false, deleted: false });
    expect(plan.objectUpdatedAt).toBe("2022-01-01T00:00:00.000Z");
    expect(run("products/create", sample({ status: null, published_at: null })).skipped).toBe(
      "product is not live (status unknown, unpublished): not advertised",
    );
  });

  it("that was advertised (or is unknown) is withdrawn with product/deleted", () => {
    for (const prior of [null, product(true)]) {
      const plan = run("products/update", sample({ published_at: null }), makeCtx({ prior }));
      expect(eventOf(plan, "product", "deleted")).toEqual({
        referenceId: "shop:acme.myshopify.com",
        source: "shopify",
        id: "788032119674292922",
        modified_at: "2022-01-01T00:00:00.000Z",
      });
      expect(plan.nextState).toEqual({ kind: "product", advertised: false, deleted: false });
      expect(plan.skipped).toBeUndefined();
    }
    const undated = eventOf(run("products/update", sample({ status: "archived", updated_at: null })), "product", "deleted");
    expect(undated).not.toHaveProperty("modified_at");
  });

  it("already withdrawn is not withdrawn again", () => {
    const plan = run("products/update", sample({ status: "archived" }), makeCtx({ prior: product(false) }));
    expect(plan.calls).toEqual([]);
    expect(plan.skipped).toMatch(/^product is not live \(status archived, published\)/);
  });

  it("once deleted stays deleted whatever arrives late", () => {
    const prior = product(false, true);
    for (const topic of ["products/create", "products/update"]) {
      const plan = run(topic, sample(), makeCtx({ prior }));
      expect(plan).toMatchObject({ calls: [], nextState: prior, skipped: "product was deleted", objectKey: "product:788032119674292922" });
    }
  });

  it("remembered under another kind counts as never seen", () => {
    const plan = run("products/update", sample(), makeCtx({ prior: { kind: "cart", created: true } }));
    expect(ops(plan)).toEqual(["product/updated"]);
  });
});

describe("a deleted product", () => {
  it("that was advertised (or never seen) is product/deleted, dated when the deletion arrived", () => {
    for (const prior of [null, product(true)]) {
      const plan = run("products/delete", fixture("products/delete"), makeCtx({ prior }));
      expect(plan.objectKey).toBe("product:788032119674292900");
      expect(plan.objectUpdatedAt).toBeNull();
      expect(plan.calls).toEqual([
        { op: "event", type: "product", action: "deleted", body: { referenceId: "shop:acme.myshopify.com", source: "shopify", id: "788032119674292900", modified_at: NOW.toISOString() } },
      ]);
      expect(plan.nextState).toEqual({ kind: "product", advertised: false, deleted: true });
    }
  });

  it("that was never advertised, or is deleted again, sends nothing and says why", () => {
    const never = run("products/delete", fixture("products/delete"), makeCtx({ prior: product(false) }));
    expect(never).toMatchObject({ calls: [], skipped: "product was never advertised (or already withdrawn)", nextState: product(false, true) });
    const again = run("products/delete", fixture("products/delete"), makeCtx({ prior: product(false, true) }));
    expect(again).toMatchObject({ calls: [], skipped: "already deleted", nextState: product(false, true), objectUpdatedAt: null });
  });
});

describe("a product description", () => {
  it("drops scripts, styles and comments, each one alone, whatever their case", () => {
    expect(htmlToText("a<script>x()</script>b<SCRIPT type='t'>y()</script >c")).toBe("a b c");
    expect(htmlToText("<style>p{}</style>keep<Style>q{}</STYLE>")).toBe("keep");
    expect(htmlToText("one<!-- note -->two<!--\nmore-->three")).toBe("one two three");
    expect(htmlToText("<scripted>kept</scripted>")).toBe("kept");
  });

  it("turns tags into spaces but keeps a lone '<' of the text", () => {
    expect(htmlToText("<P>a</P><p>b</p><br/>c")).toBe("a b c");
    expect(htmlToText("1 < 2 and 3 <4")).toBe("1 < 2 and 3 <4");
    expect(htmlToText("")).toBe("");
    expect(htmlToText(undefined)).toBe("");
  });

  it("decodes numeric references in decimal and hex, either case, within Unicode", () => {
    expect(htmlToText("&#8220;q&#8221; &#x2615;&#X2615; &#xA9;&#169;")).toBe("“q” ☕☕ ©©");
    expect(htmlToText("&#x10FFFF;").codePointAt(0)).toBe(0x10ffff);
    expect(htmlToText("&#0; &#x110000; &#1114112;")).toBe("&#0; &#x110000; &#1114112;");
    expect(htmlToText("&#xZZ; &#12a;")).toBe("&#xZZ; &#12a;");
  });

  it("decodes every named entity a product editor produces, exact case first", () => {
    const named =
      "&amp;&lt;&gt;&quot;&apos;&hellip;&mdash;&ndash;&lsquo;&rsquo;&ldquo;&rdquo;&laquo;&raquo;&bull;&middot;&copy;&reg;&trade;&deg;&times;" +
      "&divide;&euro;&pound;&yen;&cent;&sect;&para;&frac12;&frac14;&frac34;&plusmn;&micro;" +
      "&aacute;&eacute;&iacute;&oacute;&uacute;&agrave;&egrave;&ugrave;&acirc;&ecirc;&ocirc;&auml;&euml;&iuml;&ouml;&uuml;&Auml;&Ouml;&Uuml;" +
      "&szlig;&ccedil;&ntilde;&oslash;&aring;&aelig;";
    expect(htmlToText(named)).toBe("&<>\"'…—–‘’“”«»•·©®™°×÷€£¥¢§¶½¼¾±µáéíóúàèùâêôäëïöüÄÖÜßçñøåæ");
    expect(htmlToText("a&nbsp;b&ensp;c&emsp;d&thinsp;e")).toBe("a b c d e");
    expect(htmlToText("a&nbsp;b")).toBe("a b");
    expect(htmlToText("soft&shy;ware")).toBe("software");
    expect(htmlToText("&AMP; &Eacute; &Copy;")).toBe("& é ©");
    expect(htmlToText("&bogus; &1x; & amp;")).toBe("&bogus; &1x; & amp;");
  });
});
