/**
 * Checks the record, admin and small-things browser tests share, on top of harness.ts: the page passes axe and fits
 * a phone, and the 4xx answers a test provokes on purpose are taken off `ui.problems`.
 */
import { expect } from 'vitest';
import type { Ui } from './harness.js';

/**
 * Chromium logs every 4xx answer on the console ("Failed to load resource: … status of 422"), which the harness
 * counts as a problem. A test that provokes one on purpose takes it off here, and learns how many there were.
 */
export function provoked(ui: Ui, status: number): number {
  const line = `console: Failed to load resource: the server responded with a status of ${status} `;
  const before = ui.problems.length;
  ui.problems.splice(0, before, ...ui.problems.filter((p) => !p.startsWith(line)));
  return before - ui.problems.length;
}

/** No axe violation (WCAG 2 A/AA) on the page as it is, and nothing wider than a 390 px phone. */
export async function expectClean(ui: Ui): Promise<void> {
  expect(await ui.axe()).toEqual([]);
  await ui.page.setViewportSize({ width: 390, height: 844 });
  try {
    const overflow = await ui.overflow();
    expect(overflow.by, `wider than the phone: ${overflow.wide.join(', ')}`).toBeLessThanOrEqual(0);
  } finally {
    await ui.page.setViewportSize({ width: 1366, height: 860 });
  }
}
