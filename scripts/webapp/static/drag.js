// Drag and drop of checkers on the SVG board, by pointer events (mouse, pen and touch alike).
// A press on a movable checker that travels more than a few pixels lifts it: the source is
// selected (so its destinations show), a copy follows the pointer, and a release over a
// destination (its translucent checker, its point or the tray) plays that step. A release
// anywhere else puts it back. The page's own click handling stays as it is for short presses.

const THRESHOLD = 6;   // pixels a press must travel before it is a drag rather than a click

// hooks: sourceAt(target) -> mover point or null; select(point); dropAt(clientX, clientY) -> bool
// (true when a step was played); color() -> the mover's colour; moved() -> called when a drag
// ended, so the click that follows is ignored.
export function setupDrag(svg, hooks) {
  let drag = null;
  svg.addEventListener("pointerdown", (e) => {
    if (e.button !== 0) return;
    const from = hooks.sourceAt(e.target);
    if (from === null) return;
    e.stopPropagation();             // a checker, not the board: the angled view does not rotate
    drag = { id: e.pointerId, from, x: e.clientX, y: e.clientY, lifted: false, copy: null };
  });
  svg.addEventListener("pointermove", (e) => {
    if (!drag || e.pointerId !== drag.id) return;
    if (!drag.lifted) {
      if (Math.hypot(e.clientX - drag.x, e.clientY - drag.y) < THRESHOLD) return;
      drag.lifted = true;
      svg.setPointerCapture(e.pointerId);   // only now: a captured press would send its click to the svg
      hooks.select(drag.from);
    }
    follow(svg, drag, e, hooks.color());
  });
  const end = (e, drop) => {
    if (!drag || e.pointerId !== drag.id) return;
    const d = drag;
    drag = null;
    if (d.copy) d.copy.remove();
    if (!d.lifted) return;
    hooks.moved();
    if (drop) hooks.dropAt(e.clientX, e.clientY);
  };
  svg.addEventListener("pointerup", (e) => end(e, true));
  svg.addEventListener("pointercancel", (e) => end(e, false));
}

// The lifted checker under the pointer, in board coordinates; redrawn if a render replaced it.
function follow(svg, drag, e, color) {
  const ctm = svg.getScreenCTM();
  if (!ctm) return;
  const pt = new DOMPoint(e.clientX, e.clientY).matrixTransform(ctm.inverse());
  if (!drag.copy || !drag.copy.isConnected) {
    drag.copy = document.createElementNS("http://www.w3.org/2000/svg", "circle");
    drag.copy.setAttribute("r", "21");
    drag.copy.setAttribute("class", `checker ${color} dragging`);
    drag.copy.setAttribute("aria-hidden", "true");
    svg.appendChild(drag.copy);
  }
  drag.copy.setAttribute("cx", pt.x);
  drag.copy.setAttribute("cy", pt.y);
}
