// "Analyse this game": asks /api/games/{id}/analysis (the match-analysis engine, run on the
// server and kept beside the game) and shows both players' figures and every decision's
// error and mark, with the game's .mat download. Used by the game page and the history page.

const NAMES = { checker: "move", cube: "cube", take: "answer" };

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (cls) node.className = cls;
  return node;
}

function row(cells, header = false) {
  const tr = el("tr");
  cells.forEach((c, i) => {
    const cell = el(header || i === 0 ? "th" : "td", c);
    if (header) cell.scope = "col";
    else if (i === 0) cell.scope = "row";
    tr.appendChild(cell);
  });
  return tr;
}

function table(caption, head, rows, cls) {
  const t = el("table", undefined, cls);
  t.appendChild(el("caption", caption));
  const thead = el("thead");
  thead.appendChild(row(head, true));
  const tbody = el("tbody");
  for (const r of rows) tbody.appendChild(r);
  t.append(thead, tbody);
  return t;
}

const signed = (x, digits = 3) => `${x >= 0 ? "+" : ""}${x.toFixed(digits)}`;

// A finished game, or a match with a finished game, can be analysed: the button says which.
export function renderAnalyseButton(button, box, st) {
  const ready = Boolean(st) && (st.phase === "over" || Boolean(st.match && st.match.results.length));
  button.hidden = !ready;
  button.textContent = !st || !st.match ? "Analyse this game"
    : st.phase === "over" ? "Analyse this match" : "Analyse the games played";
  if (!ready || box.dataset.game !== st.game_id) { box.hidden = true; box.replaceChildren(); }
}

function playersTable(a) {
  const unit = a.match_length ? "MWC" : "points";
  const p = a.players;
  const lines = [
    ["Checker error rate (mEMG per move)", (x) => `${x.checker_error_rate.toFixed(1)} (${x.unforced_moves} moves)`],
    ["Cube error rate (mEMG per decision)", (x) => `${x.cube_error_rate.toFixed(1)} (${x.close_cube_decisions} decisions)`],
    ["Overall error rate", (x) => x.error_rate.toFixed(1)],
    ["Rating", (x) => x.rating],
    ["Marks: doubtful / bad / very bad", (x) => ["doubtful", "bad", "very bad"]
      .map((m) => (x.checker_marks[m] || 0) + (x.cube_marks[m] || 0)).join(" / ")],
    ["Luck", (x) => `${signed(x.luck)} EMG (${signed(x.luck_cost)} ${unit})`],
    ["Luck-adjusted result", (x) => `${signed(x.luck_adjusted_result)} ${unit}`],
  ];
  return table("The players", ["", ...p.map((x) => x.name)],
               lines.map(([label, f]) => row([label, ...p.map(f)])), "analysis-players");
}

function decisionsTable(a) {
  const shown = a.decisions.filter((d) => d.kind !== "cube" || d.close || d.played === "double");
  const rows = shown.map((d) => {
    const tr = row([`${a.match_length ? `${d.game}.` : ""}${d.move}`, d.player,
                    d.dice ? d.dice.join("") : "", NAMES[d.kind] || d.kind, d.played || "-",
                    d.best || "-", d.forced ? "forced" : d.error.toFixed(3), d.mark || ""]);
    if (d.mark) tr.className = `mark-${d.mark.replace(" ", "-")}`;
    return tr;
  });
  return table("Every decision: error in equity per 1-cube (EMG), marked from 0.03 doubtful, 0.06 bad, 0.12 very bad",
               ["Move", "Player", "Roll", "Decision", "Played", "Best", "Error", "Mark"], rows, "analysis-decisions");
}

// Show the analysis of game `gameId` in `box`, a status line (a live region) first saying what
// is happening. Returns the analysis, or null on a refusal.
export async function showAnalysis(gameId, box) {
  box.dataset.game = gameId;
  box.hidden = false;
  box.replaceChildren();
  const status = el("p", "Analysing the game: every decision is graded by the engine…");
  status.setAttribute("role", "status");
  box.appendChild(status);
  const res = await fetch(`/api/games/${encodeURIComponent(gameId)}/analysis`);
  const a = await res.json().catch(() => ({ error: `HTTP ${res.status}` }));
  if (!res.ok) {
    status.textContent = `Cannot analyse: ${a.error || res.status}`;
    status.className = "error";
    return null;
  }
  const heading = el("h3", `Analysis (${a.ply}-ply, ${a.evaluator}) of ` +
    (a.match_length ? `the match to ${a.match_length}, ${a.games_analysed} game${a.games_analysed > 1 ? "s" : ""}` : "the game"));
  const link = el("a", "Download the game as .mat");
  link.href = a.mat;
  link.setAttribute("download", `tdgammon-${a.game_id}.mat`);
  status.textContent = `Analysis done: ${a.players.map((p) => `${p.name} ${p.rating}, ` +
    `${p.error_rate.toFixed(1)} mEMG per decision`).join("; ")}.`;
  box.append(heading, playersTable(a), decisionsTable(a), el("p"));
  box.lastChild.appendChild(link);
  return a;
}
