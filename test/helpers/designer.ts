import type { Page } from 'playwright-core';

/**
 * Opens a section of the designer by its link in the navigation, as a person does: below 800 px
 * the links fold behind the Menu button, which is opened first. Waits for the section's heading.
 */
export async function openSection(page: Page, link: string, heading = link): Promise<void> {
  await openDesignerMenu(page);
  await page.getByRole('navigation', { name: 'Designer' }).getByRole('link', { name: link, exact: true }).click();
  await page.getByRole('heading', { level: 1, name: heading, exact: true }).waitFor();
}

/** Opens the designer's menu when its button shows (a narrow window); does nothing on a wide one. */
export async function openDesignerMenu(page: Page): Promise<void> {
  const nav = page.getByRole('navigation', { name: 'Designer' });
  await nav.waitFor();
  const toggle = nav.getByRole('button', { name: 'Menu' });
  if ((await toggle.isVisible()) && (await toggle.getAttribute('aria-expanded')) !== 'true') await toggle.click();
}

/** A feature's detail page for Orders: it reads the order's id from its address with useParams. */
export const ORDER_DETAIL_PAGE = `import { useParams, useQuery } from '@trellis/runtime';
import { Card, Text } from '@trellis/ui';

const GET = \`query Order($id: ID!) { getOrders(Id: $id) { _id title amount } }\`;

export default function OrderDetail() {
  const { order } = useParams();
  const { data, loading } = useQuery(GET, { id: order });
  if (loading) return <Text>Loading…</Text>;
  return (
    <Card title="Order detail">
      <Text>Order {order}: {data?.getOrders ? data.getOrders.title + ' for ' + data.getOrders.amount : 'not found'}</Text>
    </Card>
  );
}
`;
