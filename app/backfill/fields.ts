/**
 * The Admin GraphQL fields the app reads of each kind (what convert.ts maps), shared by the bulk
 * export, the lookups of unknown objects and the reconciliation sweep: one object, one shape.
 */
const ADDRESS = "firstName lastName company address1 address2 city province provinceCode zip country countryCodeV2 phone";
const MONEY = "shopMoney { amount currencyCode }";

// Not the deprecated Customer.email / phone / emailMarketingConsent nor Product.featuredImage
// (the schema test refuses deprecated fields): their replacements, as the schema says.
export const CUSTOMER_FIELDS = `id firstName lastName state tags createdAt updatedAt numberOfOrders
  defaultEmailAddress { emailAddress marketingState marketingOptInLevel marketingUpdatedAt } defaultPhoneNumber { phoneNumber }
  amountSpent { amount currencyCode } defaultAddress { ${ADDRESS} }`;

export const PRODUCT_FIELDS = `id title handle descriptionHtml vendor productType status tags publishedAt createdAt updatedAt featuredMedia { preview { image { url } } }`;
export const VARIANT_FIELDS = "id sku barcode price title selectedOptions { value }";

export const ORDER_FIELDS = `id name email phone createdAt updatedAt processedAt cancelledAt closedAt currencyCode
  displayFinancialStatus displayFulfillmentStatus statusPageUrl test tags
  totalPriceSet { ${MONEY} } subtotalPriceSet { ${MONEY} } totalTaxSet { ${MONEY} } totalDiscountsSet { ${MONEY} }
  totalShippingPriceSet { ${MONEY} } customer { id defaultEmailAddress { emailAddress } } billingAddress { ${ADDRESS} } shippingAddress { ${ADDRESS} }`;
export const LINE_ITEM_FIELDS = `id name title sku vendor quantity originalUnitPriceSet { ${MONEY} } product { id } variant { id }`;
export const CONTRACT_FIELDS = "id createdAt currencyCode status billingPolicy { interval intervalCount minCycles maxCycles } deliveryPolicy { interval intervalCount }";
export const CONTRACT_LINE_FIELDS = `id title variantTitle productId variantId sku quantity currentPrice { amount currencyCode } variantImage { url }
  sellingPlanId sellingPlanName`;
