// The position page's board by keyboard: its cells (24 points, the bar, the two trays) laid out
// as drawn from White's side, arrow-key moves between them, and what each key asks for.
// One Tab stop (a roving tabindex); the page (position.js) applies the edits and says the keys.

// Top row left to right, then the bottom row: points in White's numbering, the bar between the
// halves, each colour's tray at the right end (Black's at the top, White's at the bottom).
const ROWS = [
  [13, 14, 15, 16, 17, 18, "bar", 19, 20, 21, 22, 23, 24, "off-black"],
  [12, 11, 10, 9, 8, 7, "bar", 6, 5, 4, 3, 2, 1, "off-white"],
];

export const CELLS = [...Array.from({ length: 24 }, (_, i) => i + 1), "bar", "off-white", "off-black"];

function where(cell, row = null) {
  for (let r = 0; r < ROWS.length; r++) {
    if (row !== null && r !== row) continue;
    const c = ROWS[r].indexOf(cell);
    if (c >= 0) return [r, c];
  }
  return [0, 0];
}

// The cell an arrow key (or Home / End) leads to from `cell`; `row` says which row the bar was
// entered from, so Left and Right leave it on the same side. Null for any other key.
export function moveFrom(cell, key, row) {
  const [r, c] = where(cell, cell === "bar" ? row : null);
  const n = ROWS[0].length;
  const to = { ArrowLeft: [r, Math.max(0, c - 1)], ArrowRight: [r, Math.min(n - 1, c + 1)],
               ArrowUp: [0, c], ArrowDown: [1, c], Home: [r, 0], End: [r, n - 1] }[key];
  if (!to) return null;
  return { cell: ROWS[to[0]][to[1]], row: to[0] };
}

// What a key on a cell asks for: { add: colour } or { remove: colour or null (whichever is
// there) } or { tool: true } (what a press does), or null. Keys with Ctrl, Alt or Meta are the
// browser's.
export function keyAction(ev) {
  if (ev.ctrlKey || ev.altKey || ev.metaKey) return null;
  switch (ev.key) {
    case "w": return { add: "white" };
    case "b": return { add: "black" };
    case "W": return { remove: "white" };
    case "B": return { remove: "black" };
    case "Delete": case "Backspace": case "-": return { remove: null };
    case "Enter": case " ": return { tool: true };
    default: return null;
  }
}
