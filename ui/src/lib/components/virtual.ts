// The arithmetic of the panel's virtual list: which rows are on screen
// (plus a few beyond, for smooth scrolling) and how far to scroll to
// bring the selected row into view. Rows have one fixed height.

export interface ListWindow {
  /** First row rendered. */
  start: number;
  /** One past the last row rendered. */
  end: number;
  /** Pixels above the first rendered row. */
  offset: number;
  /** Pixels of the whole list. */
  total: number;
}

export function windowFor(scrollTop: number, viewport: number, rowHeight: number, count: number, overscan = 6): ListWindow {
  const total = count * rowHeight;
  if (count === 0 || rowHeight <= 0) return { start: 0, end: 0, offset: 0, total };
  const top = Math.max(0, Math.min(scrollTop, Math.max(0, total - viewport)));
  const start = Math.max(0, Math.floor(top / rowHeight) - overscan);
  const end = Math.min(count, Math.ceil((top + Math.max(viewport, 0)) / rowHeight) + overscan);
  return { start, end, offset: start * rowHeight, total };
}

/** The scroll position that shows row `index` whole, or null when it already is. */
export function scrollToReveal(index: number, scrollTop: number, viewport: number, rowHeight: number): number | null {
  const top = index * rowHeight;
  const bottom = top + rowHeight;
  if (top < scrollTop) return top;
  if (bottom > scrollTop + viewport) return Math.max(0, bottom - viewport);
  return null;
}
