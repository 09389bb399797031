// The finished-games page: one row per game from /api/history, each with its .mat download
// and a button that shows its analysis below the table.
import { showAnalysis } from "/static/review.js";

const cap = (s) => s[0].toUpperCase() + s.slice(1);

async function load() {
  const res = await fetch("/api/history");
  const data = await res.json();
  const body = document.querySelector("#history tbody");
  for (const g of data.games) {
    const tr = document.createElement("tr");
    const when = g.finished ? new Date(g.finished * 1000).toLocaleString() : "";
    const result = (g.match ? `Match to ${g.match.length}: ${cap(g.winner)} wins ${Math.max(...g.match.score)}-` +
      `${Math.min(...g.match.score)}; last game ` : "") +
      `${cap(g.winner)} wins ${g.points} point${g.points === 1 ? "" : "s"} (${g.how})` +
      (g.takebacks ? `, ${g.takebacks} takeback${g.takebacks === 1 ? "" : "s"}` : "");
    for (const text of [when, g.white, g.black, result, String(g.moves)]) {
      const td = document.createElement("td");
      td.textContent = text;
      tr.appendChild(td);
    }
    const td = document.createElement("td");
    const a = document.createElement("a");
    a.href = g.mat;
    a.textContent = "Download .mat";
    a.setAttribute("download", `tdgammon-${g.game_id}.mat`);
    const which = document.createElement("span");
    which.className = "sr-only";
    which.textContent = ` (the game finished ${when})`;
    a.appendChild(which);
    td.appendChild(a);
    const analyse = document.createElement("button");
    analyse.textContent = "Analyse";
    analyse.setAttribute("aria-label", `Analyse the game finished ${when}`);
    analyse.addEventListener("click", () => showAnalysis(g.game_id, document.querySelector("#analysis")));
    td.append(" ", analyse);
    tr.appendChild(td);
    body.appendChild(tr);
  }
  document.querySelector("#history-empty").hidden = data.games.length > 0;
}

load();
