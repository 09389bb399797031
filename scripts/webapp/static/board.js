// The board as SVG, drawn from the player's side: their home board bottom right, the other
// home top right (ui.flip mirrors top and bottom for Black), the bar in the middle, the trays
// for borne-off checkers on the right.
// Points are absolute (White's numbering); a mover's point p is p for White, 25 - p for Black.

const NS = "http://www.w3.org/2000/svg";
export const W = 760, H = 540;
const M = 20, PW = 50, BAR_W = 50, R = 22;
const LEFT0 = M, RIGHT0 = M + 6 * PW + BAR_W;           // x of the two halves
const TRAY_X = RIGHT0 + 6 * PW + M;                        // tray column
const MV = 28;                                              // top and bottom margins: the point numbers
const TOP = MV, BOTTOM = H - MV, MID = H / 2;

export function absPoint(color, p) {
  // A mover's point (1..24, 25 bar, 0 off) as the absolute White-numbered point (bar/off stay).
  if (p === 25 || p === 0) return p;
  return color === "white" ? p : 25 - p;
}

function pointX(abs) {
  if (abs <= 6) return RIGHT0 + 6 * PW - (abs - 0.5) * PW;
  if (abs <= 12) return LEFT0 + 6 * PW - (abs - 6.5) * PW;
  if (abs <= 18) return LEFT0 + (abs - 12.5) * PW;
  return RIGHT0 + (abs - 18.5) * PW;
}
let FLIP = false;                                            // set by renderBoard: Black at the bottom
const isTop = (abs) => (abs >= 13) !== FLIP;
const atBottom = (color) => (color === "white") !== FLIP;      // that colour's bar half and tray

// The area of a set-up cell, in board coordinates (for the position page's keyboard cells): an
// absolute point's half column, "bar", or a colour's tray ("off-white", "off-black").
export function cellBox(cell) {
  if (cell === "bar") return { x: LEFT0 + 6 * PW, y: TOP, width: BAR_W, height: BOTTOM - TOP };
  if (cell === "off-white" || cell === "off-black") {
    return { x: TRAY_X, y: atBottom(cell.slice(4)) ? MID + 10 : TOP, width: W - TRAY_X - 8, height: BOTTOM - MID - 10 };
  }
  const x = pointX(cell) - PW / 2;
  return isTop(cell) ? { x, y: TOP, width: PW, height: MID - TOP } : { x, y: MID, width: PW, height: BOTTOM - MID };
}

function el(name, attrs = {}, parent = null) {
  const node = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (parent) parent.appendChild(node);
  return node;
}

// Centre of the i-th checker (0 = outermost) on an absolute point; stacks over 5 overlap.
function checkerXY(abs, i, n) {
  const step = n > 5 ? (5 * 2 * R - 2 * R) / (n - 1) : 2 * R;
  const x = pointX(abs);
  return isTop(abs) ? [x, TOP + R + i * step] : [x, BOTTOM - R - i * step];
}

function barXY(color, i) {
  const x = LEFT0 + 6 * PW + BAR_W / 2;
  // The player at the bottom waits on the lower half of the bar, the other on the upper half.
  return atBottom(color) ? [x, MID + R + 8 + i * 2 * R * 0.8] : [x, MID - R - 8 - i * 2 * R * 0.8];
}

function drawChecker(g, x, y, color, extra = {}) {
  return el("circle", { cx: x, cy: y, r: R - 1, class: `checker ${color}`, ...extra }, g);
}

export function renderBoard(svg, state, ui) {
  // ui: { mover: "white"|"black"|null, selected: mover point or null, sources: Set of mover points,
  //       dests: [{to, die}], label: "white"|"black" (numbering shown), lastMoveAbs: Set }
  FLIP = Boolean(ui.flip);
  svg.replaceChildren();
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  el("rect", { x: 0, y: 0, width: W, height: H, rx: 14, class: "frame" }, svg);
  for (const x0 of [LEFT0, RIGHT0]) el("rect", { x: x0, y: TOP, width: 6 * PW, height: BOTTOM - TOP, class: "field" }, svg);
  el("rect", { x: LEFT0 + 6 * PW, y: 0, width: BAR_W, height: H, class: "bar" }, svg);
  const label = ui.label || "white";
  for (let abs = 1; abs <= 24; abs++) {
    const x = pointX(abs), top = isTop(abs);
    const tip = top ? TOP + 5 * 2 * R - 6 : BOTTOM - 5 * 2 * R + 6;
    const base = top ? TOP : BOTTOM;
    const cls = `tri ${abs % 2 ? "odd" : "even"}${ui.lastMoveAbs && ui.lastMoveAbs.has(abs) ? " last" : ""}`;
    el("polygon", { points: `${x - PW / 2 + 1},${base} ${x + PW / 2 - 1},${base} ${x},${tip}`, class: cls, "data-abs": abs }, svg);
    const num = label === "white" ? abs : 25 - abs;
    const t = el("text", { x, y: top ? TOP / 2 : BOTTOM + MV / 2, class: "pointnum" }, svg);
    t.textContent = num;
  }
  // Trays: the bottom player's at the bottom right, the other's at the top right.
  for (const color of ["white", "black"]) {
    const y = atBottom(color) ? MID + 10 : TOP;
    const h = BOTTOM - MID - 10;
    el("rect", { x: TRAY_X, y, width: W - TRAY_X - 8, height: h, rx: 6, class: `tray tray-${color}`, "data-tray": color }, svg);
    const n = state.board.off[color];
    for (let i = 0; i < n; i++) {
      const sy = atBottom(color) ? BOTTOM - 8 - i * 12 : TOP + 4 + i * 12;
      el("rect", { x: TRAY_X + 6, y: sy - 4, width: W - TRAY_X - 20, height: 9, rx: 3, class: `slab ${color}` }, svg);
    }
  }
  const pts = state.board.points;
  const topOf = {};   // absolute point -> [x, y] of its outermost checker
  for (let abs = 1; abs <= 24; abs++) {
    const v = pts[abs - 1];
    const n = Math.abs(v), color = v > 0 ? "white" : "black";
    for (let i = 0; i < n; i++) {
      const [x, y] = checkerXY(abs, i, n);
      drawChecker(svg, x, y, color, { "data-abs": abs });
      topOf[abs] = [x, y];
    }
    if (n > 5) {
      const [x, y] = checkerXY(abs, n - 1, n);
      const t = el("text", { x, y: y + 5, class: `count ${color}` }, svg);
      t.textContent = n;
    }
  }
  const barTop = {};
  for (const color of ["white", "black"]) {
    const n = state.board.bar[color];
    for (let i = 0; i < Math.min(n, 4); i++) {
      const [x, y] = barXY(color, i);
      drawChecker(svg, x, y, color, { "data-bar": color });
      barTop[color] = [x, y];
    }
    if (n > 1) {
      const [x, y] = barXY(color, Math.min(n, 4) - 1);
      const t = el("text", { x, y: y + 5, class: `count ${color}` }, svg);
      t.textContent = n;
    }
  }
  drawDice(svg, state, ui);
  drawCube(svg, state);
  const mover = ui.mover;
  if (!mover) return;
  // Gold rings on the movable checkers (the outermost of each source).
  for (const p of ui.sources) {
    const xy = p === 25 ? barTop[mover] : topOf[absPoint(mover, p)];
    if (!xy) continue;
    const sel = ui.selected === p;
    el("circle", { cx: xy[0], cy: xy[1], r: R + 2, class: `ring${sel ? " selected" : ""}`, "data-src": p,
                   role: "button", "aria-label": `move from ${p === 25 ? "bar" : p}` }, svg);
  }
  // Translucent checkers on the destinations of the selected source; the tray for bearing off.
  for (const d of ui.dests) {
    if (d.to === 0) {
      const tray = svg.querySelector(`[data-tray="${mover}"]`);
      tray.classList.add("dest");
      tray.setAttribute("data-to", "0");
      tray.setAttribute("data-die", d.die);
      continue;
    }
    const abs = absPoint(mover, d.to);
    const v = pts[abs - 1];
    const own = (v > 0) === (mover === "white") && v !== 0 ? Math.abs(v) : 0;
    const [x, y] = checkerXY(abs, Math.min(own, 4), 1);
    el("circle", { cx: x, cy: y, r: R - 1, class: `ghost ${mover}`, "data-to": d.to, "data-die": d.die,
                   role: "button", "aria-label": `move to ${d.to}` }, svg);
  }
}

// The doubling cube (games with cube): in the tray column, between the trays when centred
// (showing 64, as on a real board), at the inner end of its owner's tray when owned; an
// offered cube sits in the right half, where the doubler's dice would be, outlined in gold.
function drawCube(svg, state) {
  const c = state.cube;
  if (!c || !c.enabled) return;
  const S = 40;
  const cap = (s) => s[0].toUpperCase() + s.slice(1);
  let x, y, value, label, cls = "cube";
  if (c.offered_by) {
    x = RIGHT0 + 3 * PW; y = MID; value = c.offered_value; cls += " offered";
    label = `${cap(c.offered_by)} offers the cube at ${value}`;
  } else {
    x = TRAY_X + (W - TRAY_X - 8) / 2;
    y = c.owner ? (atBottom(c.owner) ? MID + 40 : MID - 40) : MID;
    value = c.owner ? c.value : (c.value === 1 ? 64 : c.value);
    label = c.owner ? `Cube at ${c.value}, owned by ${cap(c.owner)}` : `Cube at ${c.value}, centred`;
    if (c.owner) cls += ` owner-${c.owner}`;
  }
  const g = el("g", { class: cls, role: "img", "aria-label": label, "data-cube": c.owner || "centre" }, svg);
  el("rect", { x: x - S / 2, y: y - S / 2, width: S, height: S, rx: 6 }, g);
  const t = el("text", { x, y: y + 7, class: value >= 100 ? "small" : "" }, g);
  t.textContent = value;
  if (c.offered_by) {
    const q = el("text", { x, y: y + S / 2 + 18, class: "cubeask" }, svg);
    q.textContent = "Take or pass?";
  }
}

function drawDice(svg, state, ui) {
  const dice = state.dice;
  const cx = RIGHT0 + 3 * PW, cy = MID;
  const g = el("g", { class: `dice${state.can_roll ? " rollable" : ""}`, "data-dice": "1" }, svg);
  if (!dice) {
    if (state.can_roll) {
      el("rect", { x: cx - 70, y: cy - 22, width: 140, height: 44, rx: 10, class: "rollhint" }, g);
      const t = el("text", { x: cx, y: cy + 6, class: "rolltext" }, g);
      t.textContent = state.phase === "opening" ? "Opening roll" : "Roll";
    }
    return;
  }
  const values = dice[0] === dice[1] ? [dice[0], dice[0]] : dice;
  const left = [...(state.dice_left || [])];
  const mover = state.turn;
  values.forEach((v, k) => {
    const x = cx - 30 + k * 60 - 20, y = cy - 20;
    const i = left.indexOf(v);
    const used = i < 0;
    if (!used) left.splice(i, 1);
    const die = el("g", { class: `die ${mover}${used ? " used" : ""}${ui.freshDice ? " fresh" : ""}` }, g);
    el("rect", { x, y, width: 40, height: 40, rx: 7 }, die);
    const pips = { 1: [[0, 0]], 2: [[-1, -1], [1, 1]], 3: [[-1, -1], [0, 0], [1, 1]],
                   4: [[-1, -1], [1, -1], [-1, 1], [1, 1]], 5: [[-1, -1], [1, -1], [0, 0], [-1, 1], [1, 1]],
                   6: [[-1, -1], [1, -1], [-1, 0], [1, 0], [-1, 1], [1, 1]] }[v];
    for (const [dx, dy] of pips) el("circle", { cx: x + 20 + dx * 10, cy: y + 20 + dy * 10, r: 3.6, class: "pip" }, die);
  });
  if (dice[0] === dice[1]) {
    const t = el("text", { x: cx, y: cy + 40, class: "doubles" }, g);
    t.textContent = `${(state.dice_left || []).length} left`;
  }
}
