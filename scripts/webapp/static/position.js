// The position page: a board set up by hand or read from a Position ID / XGID, with the engine's
// evaluation, cube action and ranked plays from POST /api/position. White is the side on roll.
// The address bar always holds a link that reopens what is shown (?id=...&dice=31&cube=2...).
import { cellBox, renderBoard } from "/static/board.js";
import { CELLS, keyAction, moveFrom } from "/static/setup_keys.js";

const $ = (sel) => document.querySelector(sel);
const START = [-2, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, -5, 5, 0, 0, 0, -3, 0, -5, 0, 0, 0, 0, 2];
const P = { points: [...START], bar: { white: 0, black: 0 }, tool: "white", timer: null, asked: 0,
            cursor: 1, cursorRow: 1 };   // the keyboard's cell (White's 1-point, bottom row)
window.tdgPosition = P;   // for the browser tests (read-only use)

const form = () => $("#settings").elements;
const onBoard = (color) => P.points.reduce((n, v) => n + (color === "white" ? Math.max(v, 0) : Math.max(-v, 0)), 0)
  + P.bar[color];

function settings() {
  const f = form();
  const dice = f.d1.value && f.d2.value ? [Number(f.d1.value), Number(f.d2.value)] : null;
  return { dice, cube: Number(f.cube.value), owner: f.owner.value, jacoby: f.jacoby.checked,
           match: Number(f.match.value) || 0, score: [Number(f.s0.value) || 0, Number(f.s1.value) || 0],
           crawford: f.crawford.checked, ply: Number(f.ply.value) };
}

function showSettings(s) {
  const f = form();
  f.d1.value = s.dice ? s.dice[0] : "";
  f.d2.value = s.dice ? s.dice[1] : "";
  f.cube.value = s.cube;
  f.owner.value = s.owner;
  f.jacoby.checked = s.jacoby;
  f.match.value = s.match;
  [f.s0.value, f.s1.value] = s.score;
  f.crawford.checked = s.crawford;
  f.ply.value = s.ply;
}

// The link that reopens the position with these settings.
function linkFor(id, s) {
  const q = new URLSearchParams({ id });
  if (s.dice) q.set("dice", s.dice.join(""));
  if (s.cube !== 1) q.set("cube", s.cube);
  if (s.owner !== "centre") q.set("owner", s.owner);
  if (s.jacoby) q.set("jacoby", "1");
  if (s.match) { q.set("match", s.match); q.set("score", s.score.join("-")); }
  if (s.crawford) q.set("crawford", "1");
  if (s.ply !== 1) q.set("ply", s.ply);
  return `/position?${q}`;
}

function settingsFromLink(q) {
  const dice = /^[1-6][1-6]$/.test(q.get("dice") || "") ? [...q.get("dice")].map(Number) : null;
  const score = (q.get("score") || "0-0").split("-").map((x) => Number(x) || 0);
  return { dice, cube: Number(q.get("cube")) || 1, owner: q.get("owner") || "centre", jacoby: q.get("jacoby") === "1",
           match: Number(q.get("match")) || 0, score: [score[0] || 0, score[1] || 0],
           crawford: q.get("crawford") === "1", ply: Number(q.get("ply")) || 1 };
}

function draw(dice) {
  const off = { white: 15 - onBoard("white"), black: 15 - onBoard("black") };
  const s = settings();
  const owner = { centre: null, me: "white", opponent: "black" }[s.owner];
  const st = { board: { points: P.points, bar: P.bar, off }, dice: dice || null, dice_left: dice || [], turn: "white",
               can_roll: false, phase: "position", cube: { enabled: true, value: s.cube, owner, offered_by: null } };
  const svg = $("#board"), focused = svg.contains(document.activeElement);
  renderBoard(svg, st, { mover: null, sources: new Set(), dests: [], label: "white", flip: false });
  drawCells(svg, focused);
  $("#pos-checkers").textContent = `On the board: White ${onBoard("white")}, Black ${onBoard("black")}. ` +
    `Borne off: White ${off.white}, Black ${off.black}. ` + ["white", "black"].map(where).join(" ");
}

// Where one colour's checkers are, in White's numbering, for those who cannot see the board.
function where(color) {
  const sign = color === "white" ? 1 : -1, out = [];
  if (P.bar[color]) out.push(`bar ${P.bar[color]}`);
  for (let i = 23; i >= 0; i--) if (Math.sign(P.points[i]) === sign) out.push(`${i + 1}: ${Math.abs(P.points[i])}`);
  return `${color === "white" ? "White" : "Black"} on ${out.length ? out.join(", ") : "no point"}.`;
}

// Ask the server about the position: by its ID (pasted or from a link) or the board set up here.
async function evaluate(what) {
  const ask = ++P.asked;
  $("#error").textContent = "";
  $("#pos-status").textContent = "Evaluating…";
  try {
    const res = await fetch("/api/position", { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ ...what, ...settings() }) });
    const data = await res.json().catch(() => ({ error: `HTTP ${res.status}` }));
    if (ask !== P.asked) return;                       // a newer question is on its way
    if (!res.ok) throw new Error(data.error || `HTTP ${res.status}`);
    show(data);
  } catch (err) {
    if (ask !== P.asked) return;
    $("#error").textContent = err.message;
    $("#pos-status").textContent = "Not evaluated: " + err.message;
  }
}

function show(data) {
  P.points = [...data.board.points];
  P.bar = { ...data.board.bar };
  P.result = data;
  showSettings(data.settings);
  draw(data.settings.dice);
  const link = linkFor(data.position_id, data.settings);
  history.replaceState(null, "", link);
  $("#out-link").href = link;
  $("#out-id").textContent = data.position_id;
  $("#pos-id").value = data.position_id;
  const e = data.evaluation, pct = (x) => `${(100 * x).toFixed(1)}%`, eq = (x) => `${x >= 0 ? "+" : ""}${x.toFixed(3)}`;
  const names = [["win", "White wins"], ["win_gammon", "… a gammon"], ["win_backgammon", "… a backgammon"],
                 ["lose_gammon", "Black wins a gammon"], ["lose_backgammon", "… a backgammon"]];
  rows("#probs tbody", [...names.map(([k, label]) => [label, pct(e.probabilities[k])]),
                        ["Cubeless equity", eq(e.equity)]], true);
  const c = data.cube;
  $("#cube-action").textContent = `${c.action} (${c.ply}-ply; ${c.settings}).`;
  const re = /redouble/i.test(c.action) ? "redouble" : "double";
  rows("#cube tbody", [[`No ${re}`, eq(c.no_double)], [`${re[0].toUpperCase() + re.slice(1)}, take`, eq(c.double_take)],
                       [`${re[0].toUpperCase() + re.slice(1)}, pass`, eq(c.double_pass)]], true);
  const plays = data.plays;
  const body = $("#plays tbody");
  body.replaceChildren();
  $("#plays").hidden = !plays || !plays.length;
  $("#plays-note").textContent = !plays ? "Pick two dice to rank the plays of that roll."
    : !plays.length ? `No legal play with ${data.settings.dice.join("-")}: the turn passes.`
    : `${plays.length} legal play${plays.length === 1 ? "" : "s"} with ${data.settings.dice.join("-")} at ${e.ply}-ply.`;
  if (plays) {
    plays.forEach((p, i) => {
      const tr = document.createElement("tr");
      for (const text of [i + 1, p.move || "no move", eq(p.equity), i ? eq(p.equity - plays[0].equity) : ""]) {
        const td = document.createElement("td");
        td.textContent = text;
        tr.appendChild(td);
      }
      body.appendChild(tr);
    });
  }
  $("#pos-status").textContent = `${c.action}. Cubeless equity ${eq(e.equity)}` +
    (plays && plays.length ? `; best play ${plays[0].move}.` : ".");
}

function rows(sel, data, header) {
  const body = $(sel);
  body.replaceChildren();
  for (const [label, value] of data) {
    const tr = document.createElement("tr");
    const th = document.createElement(header ? "th" : "td");
    if (header) th.scope = "row";
    th.textContent = label;
    const td = document.createElement("td");
    td.textContent = value;
    tr.append(th, td);
    body.appendChild(tr);
  }
}

// The keyboard's cells over the board, one Tab stop (the cursor's), each named by what it holds.
function drawCells(svg, focus) {
  for (const cell of CELLS) {
    const r = document.createElementNS(svg.namespaceURI, "rect");
    for (const [k, v] of Object.entries(cellBox(cell))) r.setAttribute(k, v);
    r.setAttribute("class", "cell");
    r.setAttribute("data-cell", String(cell));
    r.setAttribute("tabindex", cell === P.cursor ? "0" : "-1");
    r.setAttribute("role", "button");
    r.setAttribute("aria-label", cellLabel(cell));
    r.setAttribute("aria-describedby", "setup-keys");
    svg.appendChild(r);
  }
  if (focus) svg.querySelector(`[data-cell="${P.cursor}"]`).focus();
}

const cap = (color) => (color === "white" ? "White" : "Black");

function cellLabel(cell) {
  if (cell === "bar") return `Bar: ${P.bar.white} White, ${P.bar.black} Black`;
  if (typeof cell === "string") return `${cap(cell.slice(4))} borne off: ${15 - onBoard(cell.slice(4))}`;
  const v = P.points[cell - 1];
  return `Point ${cell}: ${v ? `${Math.abs(v)} ${v > 0 ? "White" : "Black"}` : "empty"}`;
}

function onKey(ev) {
  if (!ev.target.closest("[data-cell]")) return;
  const move = moveFrom(P.cursor, ev.key, P.cursorRow);
  if (move) {
    ev.preventDefault();
    [P.cursor, P.cursorRow] = [move.cell, move.row];
    for (const r of $("#board").querySelectorAll("[data-cell]")) r.setAttribute("tabindex", "-1");
    const r = $("#board").querySelector(`[data-cell="${P.cursor}"]`);
    r.setAttribute("tabindex", "0");
    r.focus();
    return;
  }
  const a = keyAction(ev);
  if (!a) return;
  ev.preventDefault();
  if (a.tool) editCell(P.cursor, P.tool === "remove" ? "remove" : "add", P.tool === "remove" ? null : P.tool);
  else editCell(P.cursor, a.add ? "add" : "remove", a.add || a.remove);
}

// A press on the board: the point, the bar or the tray under it, with the chosen tool (or a
// right-click: remove); a press on a checker on the bar removes one of that colour.
function edit(target, remove) {
  const tool = remove ? "remove" : P.tool;
  const abs = target.closest("[data-abs]");
  const barChecker = target.closest("[data-bar]");
  const tray = target.closest("[data-tray]");
  let cell;
  if (abs) cell = Number(abs.dataset.abs);
  else if (barChecker || target.closest(".bar")) cell = "bar";
  else if (tray) cell = `off-${tray.dataset.tray}`;
  else return;
  editCell(cell, tool === "remove" ? "remove" : "add", tool === "remove" ? (barChecker ? barChecker.dataset.bar : null) : tool);
}

// One edit of one cell: add a checker of `color` (replacing the other colour's on a point), or
// remove one (of `color`, or of whichever is there: White first on the bar). On a tray, adding
// bears off that colour's checker nearest home (the lowest point in its numbering, else the bar).
function editCell(cell, kind, color) {
  $("#error").textContent = "";
  if (typeof cell === "string" && cell.startsWith("off-")) {
    const own = cell.slice(4);
    if (kind === "remove") return say(`A borne-off checker comes back when you add it to a point or the bar.`);
    if (color !== own) return say(`${cap(own)}'s tray holds only ${cap(own)} checkers.`);
    const sign = own === "white" ? 1 : -1;
    const order = own === "white" ? [...Array(24).keys()] : [...Array(24).keys()].reverse();
    const i = order.find((k) => Math.sign(P.points[k]) === sign);
    if (i !== undefined) P.points[i] -= sign;
    else if (P.bar[own]) P.bar[own] -= 1;
    else return say(`No ${cap(own)} checker is left on the board.`);
  } else if (cell === "bar") {
    if (kind === "add") {
      if (onBoard(color) >= 15) return refuse(color);
      P.bar[color] += 1;
    } else {
      const c = color || (P.bar.white ? "white" : "black");
      if (!P.bar[c]) return say(`No ${cap(c)} checker on the bar.`);
      P.bar[c] -= 1;
    }
  } else {
    const i = cell - 1, v = P.points[i];
    if (kind === "add") {
      const sign = color === "white" ? 1 : -1;
      if (onBoard(color) >= 15) return refuse(color);
      P.points[i] = Math.sign(v) === -sign ? sign : v + sign;
    } else {
      if (!v || (color && Math.sign(v) !== (color === "white" ? 1 : -1))) {
        return say(`No ${color ? cap(color) + " " : ""}checker on point ${cell}.`);
      }
      P.points[i] = v - Math.sign(v);
    }
  }
  $("#setup-status").textContent = `${cellLabel(cell)}.`;
  changed();
}

function say(text) {
  $("#error").textContent = text;
}

function refuse(color) {
  say(`${cap(color)} already has 15 checkers on the board.`);
}

function changed() {
  draw(settings().dice);
  clearTimeout(P.timer);
  if (!onBoard("white") || !onBoard("black")) {
    P.asked++;                       // a finished game has nothing to evaluate
    $("#pos-status").textContent = "Put at least one checker of each colour on the board to evaluate.";
    return;
  }
  P.timer = setTimeout(() => evaluate({ board: { points: P.points, bar: [P.bar.white, P.bar.black] } }), 250);
}

function init() {
  const f = form();
  for (let v = 1; v <= 6; v++) for (const s of [f.d1, f.d2]) s.add(new Option(String(v), String(v)));
  for (let v = 1; v <= 64; v *= 2) f.cube.add(new Option(String(v), String(v)));
  for (const b of document.querySelectorAll("[data-tool]")) {
    b.addEventListener("click", () => {
      P.tool = b.dataset.tool;
      for (const o of document.querySelectorAll("[data-tool]")) o.setAttribute("aria-pressed", String(o === b));
    });
  }
  $("#board").addEventListener("click", (ev) => edit(ev.target, false));
  $("#board").addEventListener("keydown", onKey);
  $("#board").addEventListener("contextmenu", (ev) => { ev.preventDefault(); edit(ev.target, true); });
  $("#btn-start").addEventListener("click", () => { P.points = [...START]; P.bar = { white: 0, black: 0 }; changed(); });
  $("#btn-clear").addEventListener("click", () => {
    P.points = Array(24).fill(0);
    P.bar = { white: 0, black: 0 };
    changed();
  });
  $("#id-form").addEventListener("submit", (ev) => { ev.preventDefault(); evaluate({ position: $("#pos-id").value }); });
  $("#settings").addEventListener("submit", (ev) => { ev.preventDefault(); changed(); });
  $("#settings").addEventListener("change", () => changed());

  const q = new URLSearchParams(location.search);
  showSettings(settingsFromLink(q));
  draw(settings().dice);
  evaluate(q.get("id") ? { position: q.get("id") } : { board: { points: P.points, bar: [0, 0] } });
}

init();
