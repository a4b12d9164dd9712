import { Form, useSubmit } from "@remix-run/react";
import { Button, Card, InlineStack, TextField } from "@shopify/polaris";
import { useEffect, useState } from "react";

/** The search box of the Activity and Problems pages: submits `q` as a GET, clearing resets it. */
export function SearchCard({ search, placeholder }: { search: string; placeholder: string }) {
  const submit = useSubmit();
  const [q, setQ] = useState(search);
  useEffect(() => setQ(search), [search]);
  return (
    <Card>
      <Form
        method="get"
        onSubmit={(e) => {
          e.preventDefault();
          submit({ q }, { method: "get", replace: true });
        }}
      >
        <InlineStack gap="200" blockAlign="end" wrap={false}>
          <div style={{ flex: 1 }}>
            <TextField
              label="Search"
              labelHidden
              name="q"
              value={q}
              onChange={setQ}
              autoComplete="off"
              placeholder={placeholder}
              clearButton
              onClearButtonClick={() => {
                setQ("");
                submit({}, { method: "get", replace: true });
              }}
            />
          </div>
          <Button submit>Search</Button>
        </InlineStack>
      </Form>
    </Card>
  );
}
