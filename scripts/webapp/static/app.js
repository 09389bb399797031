// The game page: a client of the JSON API. The server rolls, checks and keeps the state;
// this file shows it, turns clicks into API calls and listens on the game's websocket.
import { renderBoard, absPoint } from "/static/board.js";
import { setupDrag } from "/static/drag.js";
import { replayFrames } from "/static/replay.js";
import { renderAnalyseButton, showAnalysis } from "/static/review.js";

const $ = (sel) => document.querySelector(sel);
const S = { gameId: null, token: null, state: null, selected: null, ws: null, wsRetry: null,
            view: "top", tiltX: 38, tiltZ: 0, zoom: 0.85, seenLog: 0, rematchAsked: false, busy: false };
window.tdg = S;  // for debugging and the browser tests (read-only use)

async function api(method, path, body) {
  const res = await fetch(path, {
    method, headers: body ? { "Content-Type": "application/json" } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  const data = await res.json().catch(() => ({ error: `HTTP ${res.status}` }));
  if (!res.ok) throw new Error(data.error || `HTTP ${res.status}`);
  return data;
}

function showError(msg) { $("#error").textContent = msg || ""; }

function setState(st) {
  if (!st || (S.state && S.state.game_id === st.game_id && st.version < S.state.version)) return;
  const prev = S.state;
  S.state = st;
  // New dice on the board tumble briefly (not with prefers-reduced-motion: see style.css).
  if (st.dice && (!prev || prev.game_id !== st.game_id || JSON.stringify(prev.dice) !== JSON.stringify(st.dice)
                  || prev.turn !== st.turn)) S.rolledAt = st.version;
  // The same version again (the API's answer and the websocket's push): nothing new to say.
  if (!prev || prev.game_id !== st.game_id || prev.version !== st.version) {
    stopReplay();
    announce(prev, st);
  }
  // A push (the computer's move, a friend's) re-renders the controls: when it took away the
  // button that had the keyboard focus, the focus goes to the next thing to press, as after
  // the player's own action (act), not to the page.
  const held = document.activeElement, scope = held && held.closest("#panel") ? "#panel-actions"
    : held && held.closest("#actions") ? "#actions" : null;
  render();
  if (scope && !S.busy) focusNext(scope);
  maybeRematch();
  maybeAuto();
}

// The auto options (kept in localStorage): roll when no double is possible, confirm a finished
// move, and play a step when it is the only one; each after a short pause, so it can be seen.
const AUTO = { roll: false, confirm: false, forced: false };

function maybeAuto() {
  clearTimeout(S.autoTimer);
  const st = S.state;
  if (!st || !st.you.length || st.phase === "over") return;
  const distinct = new Set(st.legal_steps.map((s) => `${s.from}-${s.to}`));
  let next = null;
  if (AUTO.roll && st.can_roll && !st.can_double) next = () => act("roll");
  else if (AUTO.confirm && st.can_confirm && !st.legal_steps.length) next = () => act("confirm");
  else if (AUTO.forced && distinct.size === 1) {
    const s = st.legal_steps[0];
    next = () => act("step", { from: s.from, to: s.to, die: s.die });
  }
  if (next) {
    const version = st.version;
    S.autoTimer = setTimeout(() => {
      if (S.state && S.state.version === version && !S.busy) next();
      else if (S.busy) maybeAuto();
    }, 350);
  }
}

// Tell screen readers (and everyone) what the other side did since the last state.
function announce(prev, st) {
  const start = prev && prev.game_id === st.game_id ? Math.min(S.seenLog, st.log.length) : st.log.length;
  // Cube answers and takebacks are announced whoever made them; a pending double is in the message.
  const fresh = st.log.slice(start).filter((e) => !e.side || !st.you.includes(e.side) || e.takeback || e.hints
    || (e.cube && !(e.cube === "double" && st.phase === "doubled")));
  S.seenLog = st.log.length;
  const news = fresh.map((e) => e.text).join(". ");
  $("#status").textContent = (news ? news + ". " : "") + st.message;
}

async function act(name, extra = {}) {
  if (!S.gameId || S.busy) return;
  S.busy = true;
  S.lastPress = null;                      // a double press is two presses on one unchanged board
  showError("");
  // Where the player acted from: focus goes back there, to the next thing to press.
  const scope = document.activeElement && document.activeElement.closest("#panel") ? "#panel-actions" : "#actions";
  if (name === "step") S.selected = null;   // no stale source or ghost destination after a step
  // The computer answers within the request: say it is thinking when that takes a moment.
  const thinking = S.state && S.state.mode === "computer" && name !== "step" && name !== "undo-step"
    ? setTimeout(() => { $("#message").textContent = "The computer is thinking…"; }, 250) : null;
  try {
    setState(await api("POST", `/api/games/${S.gameId}/${name}`, { token: S.token, ...extra }));
  } catch (err) {
    showError(err.message);
    refresh();
  } finally {
    clearTimeout(thinking);
    if (S.state) $("#message").textContent = S.state.message;
    S.busy = false;
    focusNext(scope);
  }
}

// Keyboard focus never drops to the page: when the pressed button went away or was disabled,
// the next action takes it (Take, Roll, the first legal step, Confirm, Rematch).
function focusNext(scope) {
  const st = S.state, a = document.activeElement;
  if (!st || (a && a !== document.body && !a.disabled && a.offsetParent !== null)) return;
  const btn = (name) => document.querySelector(scope === "#panel-actions"
    ? `#panel-actions [data-act="${name}"]` : `#btn-${name}`);
  const target = st.can_take ? btn("take") : st.can_answer_resign ? $("#btn-accept-resign")
    : st.can_roll ? btn("roll")
    : st.legal_steps.length ? document.querySelector("#steps .stepbtn")
    : st.can_confirm ? btn("confirm")
    : st.phase === "over" && st.you.length ? $("#btn-rematch") : null;
  if (target && !target.disabled && !target.hidden) target.focus();
}

async function refresh() {
  if (!S.gameId) return;
  try {
    const q = S.token ? `?token=${encodeURIComponent(S.token)}` : "";
    setState(await api("GET", `/api/games/${S.gameId}${q}`));
  } catch (err) { showError(err.message); }
}

function connect() {
  if (S.ws) { S.ws.onclose = null; S.ws.close(); }
  clearTimeout(S.wsRetry);
  const proto = location.protocol === "https:" ? "wss" : "ws";
  const q = S.token ? `?token=${encodeURIComponent(S.token)}` : "";
  const ws = new WebSocket(`${proto}://${location.host}/api/games/${S.gameId}/ws${q}`);
  ws.onmessage = (ev) => setState(JSON.parse(ev.data));
  ws.onclose = () => { if (S.ws === ws) S.wsRetry = setTimeout(connect, 1500); };
  S.ws = ws;
}

function openGame(gameId, token) {
  S.gameId = gameId;
  S.token = token;
  S.state = null;
  S.selected = null;
  S.seenLog = 0;
  S.rematchAsked = false;
  if (token) localStorage.setItem(`tdg:${gameId}`, token);
  history.replaceState(null, "", `/?game=${encodeURIComponent(gameId)}`);
  connect();
  refresh();
}

async function newGame(mode, level, color) {
  showError("");
  try {
    const res = await api("POST", "/api/games", { mode, level: level || "medium", color: color || $("#opt-color").value,
                                                  cube: $("#opt-cube").checked, match: Number($("#opt-match").value) });
    openGame(res.game_id, res.token);
    setState(res.state);
  } catch (err) { showError(err.message); }
}

async function maybeRematch() {
  const st = S.state;
  // In a friend game the other player's page follows a rematch started by either side.
  if (st && st.mode === "friend" && st.rematch_id && st.you.length && !S.rematchAsked) {
    S.rematchAsked = true;
    await rematch();
  }
}

async function rematch() {
  try {
    const res = await api("POST", `/api/games/${S.gameId}/rematch`, { token: S.token });
    openGame(res.game_id, res.token);
    setState(res.state);
  } catch (err) { showError(err.message); }
}

// ----- rendering -----------------------------------------------------------------

function myColor(st) {
  if (st.you.length === 1) return st.you[0];
  return st.turn || "white";
}

// The board is drawn from your side, your home board bottom right: Black's seat turns it. In
// hot-seat it stays White's unless "Turn the board to the player on roll" is on (off by
// default, as the page this game follows; kept in localStorage like the auto options).
function flipped(st) {
  if (st.you.length === 1) return st.you[0] === "black";
  return st.mode === "hotseat" && S.turnBoard && st.turn === "black";
}

function render() {
  const st = S.state;
  if (!st) return;
  const steps = st.legal_steps;
  const mover = steps.length ? st.turn : null;
  const sources = new Set(steps.map((s) => s.from));
  if (S.selected !== null && !sources.has(S.selected)) S.selected = null;
  if (sources.size === 1) S.selected = [...sources][0];
  const dests = [];
  if (S.selected !== null) {
    for (const s of steps.filter((x) => x.from === S.selected)) {
      if (!dests.some((d) => d.to === s.to)) dests.push(s);   // steps come smallest die first
    }
  }
  S.dests = dests;
  if (S.replay) drawReplayFrame();
  else renderBoard($("#board"), st, { mover, selected: S.selected, sources, dests, label: myColor(st),
                                 flip: flipped(st), lastMoveAbs: lastMoveAbs(st),
                                 freshDice: S.rolledAt === st.version });
  $("#message").textContent = st.message;
  $("#spectator").hidden = !(st.you.length === 0 && st.phase !== "waiting");
  $("#turn-board").hidden = st.mode !== "hotseat";

  const flags = { roll: st.can_roll, confirm: st.can_confirm, "undo-step": st.can_undo_step,
                  "undo-move": st.can_undo_move, double: st.can_double, take: st.can_take, pass: st.can_pass };
  // Double shows in games with cube (enabled when allowed); Take/Pass only to the player doubled.
  const shown = { double: st.cube.enabled, take: st.can_take, pass: st.can_pass };
  for (const [k, v] of Object.entries(flags)) {
    const panelBtn = document.querySelector(`#panel-actions [data-act="${k}"]`);
    $(`#btn-${k}`).disabled = !v;
    panelBtn.disabled = !v;
    if (k in shown) { $(`#btn-${k}`).hidden = !shown[k]; panelBtn.hidden = !shown[k]; }
  }
  $("#btn-replay").hidden = !(st.last_move && st.last_move.before);
  $("#btn-replay").disabled = st.phase === "move" && st.steps_taken.length > 0;
  $("#btn-resign").disabled = !st.can_resign;
  $("#btn-hint").disabled = !st.can_hint;
  $("#btn-hint").hidden = st.mode === "friend" && !st.hints.on;
  renderHintConsent(st);
  if (!st.can_hint || st.version !== S.hintVersion) $("#hint").hidden = true;
  $("#btn-undo-move").hidden = st.mode === "friend";
  document.querySelector('#panel-actions [data-act="undo-move"]').hidden = st.mode === "friend";
  $("#btn-takeover").hidden = !st.can_take_over;
  renderMatch(st);
  $("#btn-rematch").hidden = !(st.phase === "over" && st.you.length);
  renderAnalyseButton($("#btn-analyse"), $("#analysis"), st);

  // Button controls: every legal step as a button.
  const box = $("#steps");
  box.replaceChildren();
  for (const s of steps) {
    const b = document.createElement("button");
    b.className = "stepbtn";
    // Seen: "13 → 8 (5)"; heard: "White 13 to 8 (5) hitting" (the visible text inside the name).
    const [from, rest] = s.label.split(" → ");
    b.append(srOnly(`${st.turn === "white" ? "White" : "Black"} `), `${from} `, hidden("→"), srOnly("to"),
             ` ${rest}`, srOnly(s.hit ? " hitting" : ""));
    b.addEventListener("click", () => act("step", { from: s.from, to: s.to, die: s.die }));
    box.appendChild(b);
  }
  if (!steps.length) {
    const p = document.createElement("span");
    p.className = "nosteps";
    p.textContent = st.phase === "move" && st.you.includes(st.turn)
      ? (st.can_confirm ? "No more steps: confirm or undo." : "") : "No steps to play now.";
    box.appendChild(p);
  }
  $("#pips").textContent = `Pip count: White ${st.pips.white}, Black ${st.pips.black}. ` +
    `Borne off: White ${st.board.off.white}, Black ${st.board.off.black}.`;
  $("#cube-text").textContent = cubeText(st);
  const log = $("#log");
  log.replaceChildren();
  for (const e of st.log) {
    const li = document.createElement("li");
    li.textContent = e.text;
    if (e.undone) {
      li.className = "undone";
      li.setAttribute("aria-label", `taken back: ${e.text}`);
    }
    log.appendChild(li);
  }
  log.scrollTop = log.scrollHeight;
  $("#checkers").textContent = checkerText(st, myColor(st));
  const seats = st.seats;
  const who = (c) => seats[c].kind === "computer" ? `computer (${st.level})`
    : st.you.includes(c) ? "you" : seats[c].joined ? (seats[c].connected ? "friend" : "friend, disconnected") : "waiting";
  $("#players").textContent = `White: ${who("white")} · Black: ${who("black")}`;

  // Friend game: the link to send, or the Join button for the invited player.
  const friend = $("#friend");
  const inviting = st.mode === "friend" && st.phase === "waiting";
  friend.hidden = !inviting;
  if (inviting) {
    const link = `${location.origin}/?join=${encodeURIComponent(st.game_id)}`;
    $("#friend-link").value = link;
    const mine = st.you.length > 0;
    $("#friend-text").textContent = mine
      ? "Send this link to your friend. The game starts when they open it and press Join."
      : "You are invited to a game of backgammon.";
    $("#btn-join").hidden = mine;
    $("#btn-copy").hidden = !mine;
    $("#friend-link").hidden = !mine;
  }
}

// Replay of the last move: its boards one after the other, then the game as it is. Any new
// state, or a second press, ends it.
const REPLAY_MS = 700;

function replayLastMove() {
  const st = S.state;
  if (S.replay) { stopReplay(); render(); return; }
  if (!st || !st.last_move || !st.last_move.before) return;
  const m = st.last_move;
  S.replay = { move: m, frames: replayFrames(m), frame: 0, timer: null };
  $("#status").textContent = `Replaying ${m.side === "white" ? "White" : "Black"}'s ${m.dice.join("-")}: ${m.move || "no move"}.`;
  const next = () => {
    const r = S.replay;
    drawReplayFrame();
    if (r.frame + 1 < r.frames.length) { r.frame += 1; r.timer = setTimeout(next, REPLAY_MS); }
    else r.timer = setTimeout(() => { stopReplay(); render(); }, REPLAY_MS);
  };
  next();
}

function drawReplayFrame() {
  const st = S.state, r = S.replay, m = r.move;
  renderBoard($("#board"), { ...st, board: r.frames[r.frame], dice: m.dice, dice_left: m.dice, turn: m.side, can_roll: false },
              { mover: null, selected: null, sources: new Set(), dests: [], label: myColor(st),
                flip: flipped(st) });
}

function stopReplay() {
  if (S.replay) clearTimeout(S.replay.timer);
  S.replay = null;
}

// The points the last turn played left and reached (absolute numbering), marked on the board.
function lastMoveAbs(st) {
  const m = st.last_move;
  if (!m || (st.phase === "move" && st.steps_taken.length)) return new Set();
  const out = new Set();
  for (const [a, b] of m.steps) for (const p of [a, b]) if (p >= 1 && p <= 24) out.add(absPoint(m.side, p));
  return out;
}

// A friend game: each player's "Allow hints in this game" (Hint is on only while both allow
// it), and who allows them, shown to both players and to anyone watching.
function renderHintConsent(st) {
  const c = st.hints.consent;
  $("#hint-consent").hidden = !st.can_consent_hints;
  if (st.can_consent_hints) $("#opt-hint-consent").checked = c[st.you[0]];
  $("#hint-consent-text").hidden = !c;
  if (!c) return;
  const name = (k) => (k === "white" ? "White" : "Black");
  const says = (k) => (st.you.includes(k) ? `you ${c[k] ? "allow them" : "do not"}`
    : `${name(k)} ${c[k] ? "allows them" : "does not"}`);
  $("#hint-consent-text").textContent = st.hints.on
    ? "Hints are on: both players allow them."
    : `Hints are off unless both players allow them: ${says("white")}, ${says("black")}.`;
}

async function setHintConsent(allow) {
  try {
    setState(await api("POST", `/api/games/${S.gameId}/hints`, { token: S.token, allow }));
  } catch (err) { showError(err.message); refresh(); }
}

// A match: the score beside the players (with the Crawford state), and a friend's resignation
// offer to accept or refuse.
function renderMatch(st) {
  const m = st.match;
  $("#match-score").hidden = !m;
  if (m) {
    $("#match-score").textContent = `Match to ${m.length}: White ${m.score.white}, Black ${m.score.black}` +
      (m.winner ? ` · ${m.winner === "white" ? "White" : "Black"} wins the match`
        : ` · game ${m.game}${m.crawford ? " · Crawford game: no doubling" : m.post_crawford ? " · post-Crawford" : ""}`);
  }
  $("#btn-accept-resign").hidden = !st.can_answer_resign;
  $("#btn-refuse-resign").hidden = !st.can_answer_resign;
}

function srOnly(text) {
  const span = document.createElement("span");
  span.className = "sr-only";
  span.textContent = text;
  return span;
}

function hidden(text) {
  const span = document.createElement("span");
  span.setAttribute("aria-hidden", "true");
  span.textContent = text;
  return span;
}

function cubeText(st) {
  const c = st.cube;
  if (!c.enabled) return "Cubeless game (no doubling).";
  const cap = (s) => s[0].toUpperCase() + s.slice(1);
  if (st.match && st.match.crawford) return "Cube: 1, out of play in the Crawford game (no doubling).";
  if (c.offered_by) return `Cube: ${cap(c.offered_by)} offers it at ${c.offered_value}; it was at ${c.value}.`;
  return c.owner ? `Cube: ${c.value}, owned by ${cap(c.owner)}.` : `Cube: ${c.value}, centred (either side may double).`;
}

function checkerText(st, view) {
  const parts = [];
  for (const color of ["white", "black"]) {
    const where = [];
    if (st.board.bar[color]) where.push(`bar ${st.board.bar[color]}`);
    for (let abs = 24; abs >= 1; abs--) {
      const v = st.board.points[abs - 1];
      if ((color === "white" && v > 0) || (color === "black" && v < 0)) {
        const p = view === "white" ? abs : 25 - abs;
        where.push(`point ${p}: ${Math.abs(v)}`);
      }
    }
    if (st.board.off[color]) where.push(`off ${st.board.off[color]}`);
    parts.push(`${color === "white" ? "White" : "Black"}: ${where.join(", ")}.`);
  }
  return `(points numbered from ${view === "white" ? "White" : "Black"}'s side) ` + parts.join(" ");
}

// ----- input ---------------------------------------------------------------------

// The engine's best plays for the roll being played, at the level's ply (not in friend games).
async function showHint() {
  const st = S.state;
  if (!st || !st.can_hint) return;
  try {
    const res = await api("GET", `/api/games/${S.gameId}/hint?token=${encodeURIComponent(S.token)}`);
    const list = $("#hint-list");
    list.replaceChildren();
    for (const p of res.plays) {
      const li = document.createElement("li");
      li.textContent = `${p.move || "no move"}: ${res.equity === "match" ? "match equity" : "equity"} ${p.equity >= 0 ? "+" : ""}${p.equity.toFixed(3)}`;
      list.appendChild(li);
    }
    S.hintVersion = S.state.version;
    $("#hint").hidden = false;
    $("#status").textContent = `Hint at ${res.ply}-ply: best ${res.plays[0].move}.`;
  } catch (err) { showError(err.message); }
}

// Resigning is confirmed first. Without the cube it is a single game (the page's rule); with
// the cube a single game, gammon or backgammon, which the computer accepts or refuses.
function askResign() {
  const st = S.state;
  if (!st || !st.can_resign) return;
  const cube = st.cube.enabled, v = st.cube.value;
  const pts = (n) => `${n * v} point${n * v === 1 ? "" : "s"}`;
  $("#resign-text").textContent = cube
    ? `Offer your opponent a single game (${pts(1)}), a gammon (${pts(2)}) or a backgammon (${pts(3)}).` +
      (st.mode === "computer" ? " The computer accepts or refuses from its evaluation."
        : st.mode === "friend" ? " Your friend accepts or refuses." : "")
    : "Your opponent wins a single game (1 point).";
  for (const b of document.querySelectorAll("[data-resign]")) b.hidden = !cube && b.dataset.resign !== "1";
  $("#resign-dialog").showModal();
}

// The mover's point of a movable checker at `target` (its ring, a checker of a movable point,
// or the mover's checker on the bar), or null.
function sourceOf(target) {
  const st = S.state;
  if (!st || !st.legal_steps.length) return null;
  const ring = target.closest("[data-src]");
  if (ring) return Number(ring.dataset.src);
  const bar = target.closest("[data-bar]");
  if (bar) return bar.dataset.bar === st.turn && st.legal_steps.some((s) => s.from === 25) ? 25 : null;
  const chk = target.closest("circle.checker[data-abs]");
  if (!chk) return null;
  const p = absPoint(st.turn, Number(chk.dataset.abs));
  return st.legal_steps.some((s) => s.from === p) ? p : null;
}

// A dragged checker released at (x, y): the step to the destination there (its translucent
// checker, its point or the tray), if it is one of the selected source's.
function dropAt(x, y) {
  const st = S.state, under = document.elementFromPoint(x, y);
  if (!st || !under || S.selected === null) return false;
  let to = null;
  const ghost = under.closest("[data-to]"), point = under.closest("[data-abs]"), tray = under.closest("[data-tray]");
  if (ghost) to = Number(ghost.dataset.to);
  else if (point) to = absPoint(st.turn, Number(point.dataset.abs));
  else if (tray && tray.dataset.tray === st.turn) to = 0;
  const d = (S.dests || []).find((x) => x.to === to);
  if (!d) return false;
  act("step", { from: S.selected, to: d.to, die: d.die });
  return true;
}

// A double press on a movable checker moves it one die's full distance: the higher die when
// it can be played from there, else the lower.
function playFullDie(from) {
  const steps = S.state.legal_steps.filter((s) => s.from === from);
  if (!steps.length) return;
  const s = steps.reduce((a, b) => (b.die > a.die ? b : a));
  act("step", { from: s.from, to: s.to, die: s.die });
}

const DOUBLE_PRESS_MS = 450;

function onBoardClick(ev) {
  const st = S.state;
  if (!st || S.dragMoved) return;
  const pressed = sourceOf(ev.target);
  if (pressed === null) S.lastPress = null;
  else {
    const now = performance.now(), last = S.lastPress;
    S.lastPress = { p: pressed, t: now };
    if (last && last.p === pressed && now - last.t < DOUBLE_PRESS_MS) {
      S.lastPress = null;
      playFullDie(pressed);
      return;
    }
  }
  const src = ev.target.closest("[data-src]");
  if (src) {
    const p = Number(src.dataset.src);
    S.selected = S.selected === p ? null : p;
    render();
    return;
  }
  const dst = ev.target.closest("[data-to]");
  if (dst && S.selected !== null) {
    act("step", { from: S.selected, to: Number(dst.dataset.to), die: Number(dst.dataset.die) });
    return;
  }
  // A press on a checker of a movable point selects it too.
  const chk = ev.target.closest("[data-abs]");
  if (chk && st.legal_steps.length) {
    const mover = st.turn;
    const hit = st.legal_steps.find((s) => s.from !== 25 && absPoint(mover, s.from) === Number(chk.dataset.abs));
    if (hit) { S.selected = hit.from; render(); return; }
  }
  if (ev.target.closest("[data-dice]") && st.can_roll) act("roll");
}

function setView(view) {
  S.view = view;
  $("#view-top").setAttribute("aria-pressed", String(view === "top"));
  $("#view-angled").setAttribute("aria-pressed", String(view === "angled"));
  document.body.classList.toggle("angled", view === "angled");
  applyTilt();
}

function applyTilt() {
  const t = $("#tilt");
  t.style.transform = S.view === "angled"
    ? `rotateX(${S.tiltX}deg) rotateZ(${S.tiltZ}deg) scale(${S.zoom})` : "none";
}

function setupAngled() {
  const stage = $("#stage");
  const pointers = new Map();
  let start = null, pinch = null;
  stage.addEventListener("pointerdown", (e) => {
    if (S.view !== "angled") return;
    pointers.set(e.pointerId, [e.clientX, e.clientY]);
    S.dragMoved = false;
    start = { x: e.clientX, y: e.clientY, tx: S.tiltX, tz: S.tiltZ };
    if (pointers.size === 2) {
      const [a, b] = [...pointers.values()];
      pinch = { d: Math.hypot(a[0] - b[0], a[1] - b[1]), zoom: S.zoom };
    }
  });
  stage.addEventListener("pointermove", (e) => {
    if (S.view !== "angled" || !pointers.has(e.pointerId)) return;
    pointers.set(e.pointerId, [e.clientX, e.clientY]);
    if (pinch && pointers.size === 2) {
      const [a, b] = [...pointers.values()];
      S.zoom = Math.min(2.5, Math.max(0.5, pinch.zoom * Math.hypot(a[0] - b[0], a[1] - b[1]) / pinch.d));
      S.dragMoved = true;
    } else if (start) {
      const dx = e.clientX - start.x, dy = e.clientY - start.y;
      if (Math.abs(dx) + Math.abs(dy) > 6) S.dragMoved = true;
      if (S.dragMoved) {
        S.tiltZ = start.tz + dx * 0.3;
        S.tiltX = Math.min(70, Math.max(0, start.tx - dy * 0.3));
      }
    }
    applyTilt();
  });
  const end = (e) => {
    pointers.delete(e.pointerId);
    if (pointers.size < 2) pinch = null;
    if (pointers.size === 0) { start = null; setTimeout(() => { S.dragMoved = false; }, 0); }
  };
  stage.addEventListener("pointerup", end);
  stage.addEventListener("pointercancel", end);
  stage.addEventListener("wheel", (e) => {
    if (S.view !== "angled") return;
    e.preventDefault();
    S.zoom = Math.min(2.5, Math.max(0.5, S.zoom * Math.exp(-e.deltaY * 0.001)));
    applyTilt();
  }, { passive: false });
}

function init() {
  for (const b of document.querySelectorAll("[data-new]")) {
    b.addEventListener("click", () => newGame(b.dataset.new, b.dataset.level, b.dataset.color));
  }
  for (const name of ["roll", "double", "take", "pass", "confirm", "undo-step", "undo-move"]) {
    $(`#btn-${name}`).addEventListener("click", () => act(name));
  }
  for (const b of document.querySelectorAll("#panel-actions [data-act]")) {
    b.addEventListener("click", () => act(b.dataset.act));
  }
  $("#btn-takeover").addEventListener("click", () => act("take-over"));
  $("#btn-accept-resign").addEventListener("click", () => act("accept-resign"));
  $("#btn-refuse-resign").addEventListener("click", () => act("refuse-resign"));
  for (let n = 1; n <= 25; n++) $("#opt-match").add(new Option(`to ${n} point${n > 1 ? "s" : ""}`, String(n)));
  $("#btn-resign").addEventListener("click", askResign);
  for (const box of document.querySelectorAll("[data-auto]")) {
    const key = `tdg:auto-${box.dataset.auto}`;
    box.checked = AUTO[box.dataset.auto] = localStorage.getItem(key) === "1";
    box.addEventListener("change", () => {
      AUTO[box.dataset.auto] = box.checked;
      localStorage.setItem(key, box.checked ? "1" : "0");
      maybeAuto();
    });
  }
  S.turnBoard = $("#opt-turn-board").checked = localStorage.getItem("tdg:turn-board") === "1";
  $("#opt-turn-board").addEventListener("change", (ev) => {
    S.turnBoard = ev.target.checked;
    localStorage.setItem("tdg:turn-board", S.turnBoard ? "1" : "0");
    render();
  });
  $("#btn-hint").addEventListener("click", showHint);
  $("#opt-hint-consent").addEventListener("change", (ev) => setHintConsent(ev.target.checked));
  $("#btn-replay").addEventListener("click", replayLastMove);
  $("#resign-cancel").addEventListener("click", () => $("#resign-dialog").close());
  for (const b of document.querySelectorAll("[data-resign]")) {
    b.addEventListener("click", () => {
      $("#resign-dialog").close();
      $("#btn-resign").focus();
      act("resign", { points: Number(b.dataset.resign) });
    });
  }
  $("#btn-rematch").addEventListener("click", () => { S.rematchAsked = true; rematch(); });
  $("#btn-analyse").addEventListener("click", () => showAnalysis(S.gameId, $("#analysis")));
  $("#btn-copy").addEventListener("click", () => navigator.clipboard && navigator.clipboard.writeText($("#friend-link").value));
  $("#btn-join").addEventListener("click", async () => {
    try {
      const res = await api("POST", `/api/games/${S.gameId}/join`);
      openGame(res.game_id, res.token);
      setState(res.state);
    } catch (err) { showError(err.message); }
  });
  $("#board").addEventListener("click", onBoardClick);
  setupDrag($("#board"), {
    sourceAt: sourceOf,
    select: (p) => { S.selected = p; render(); },
    dropAt,
    color: () => (S.state ? S.state.turn : "white"),
    moved: () => { S.dragMoved = true; setTimeout(() => { S.dragMoved = false; }, 0); },
  });
  $("#view-top").addEventListener("click", () => setView("top"));
  $("#view-angled").addEventListener("click", () => setView("angled"));
  setupAngled();

  const params = new URLSearchParams(location.search);
  const join = params.get("join"), game = params.get("game");
  if (join && localStorage.getItem(`tdg:${join}`)) {
    openGame(join, localStorage.getItem(`tdg:${join}`));   // the invited friend, back in a new tab
  } else if (join) {
    S.gameId = join;
    S.token = null;
    connect();
    refresh();
  } else if (game) {
    openGame(game, localStorage.getItem(`tdg:${game}`));
  } else {
    $("#message").textContent = "Choose a game above: against the computer, two players on this device, or a friend.";
    $("#status").textContent = $("#message").textContent;
  }
}

init();
