// Drag and drop of checkers on the SVG board, by pointer events (mouse, pen and touch alike).
// A press on a movable checker that travels more than a few pixels lifts it: the source is
// selected (so its destinations show), a copy follows the pointer, and a release over a
// destination (its translucent checker, its point or the tray) plays that step. A release
// anywhere else puts it back. The page's own click handling stays as it is for short presses.

const THRESHOLD = 6;   // pixels a press must travel before it is a drag rather than a click

// hooks: sourceAt(target) -> mover point or null; select(point) (selects it and redraws the
// board); dropAt(clientX, clientY) -> bool
// (true when a step was played); color() -> the mover's colour; moved() -> called when a drag
// ended, so the click that follows is ignored.
export function setupDrag(svg, hooks) {
  let drag = null;
  svg.addEventListener("pointerdown", (e) => {
    if (e.button !== 0) return;
    const from = hooks.sourceAt(e.target);
    if (from === null) return;
    e.stopPropagation();             // a checker, not the board: the angled view does not rotate
    // The pressed circle itself becomes the lifted checker: a touch keeps sending its events to
    // the element it began on, so that element must stay in the board when the board redraws.
    drag = { id: e.pointerId, from, x: e.clientX, y: e.clientY, lifted: false, copy: e.target };
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
    if (!d.lifted) return;
    d.copy.remove();
    hooks.moved();
    if (!drop || !hooks.dropAt(e.clientX, e.clientY)) hooks.select(d.from);   // put back: the board redrawn
  };
  // A finger on a movable checker drags it rather than scrolling the page (touch-action is not
  // honoured on every SVG shape, so the touch's default is stopped while a drag is pending).
  svg.addEventListener("touchmove", (e) => { if (drag) e.preventDefault(); }, { passive: false });
  svg.addEventListener("pointerup", (e) => end(e, true));
  svg.addEventListener("pointercancel", (e) => end(e, false));
}

// The lifted checker under the pointer, in board coordinates; redrawn if a render replaced it.
function follow(svg, drag, e, color) {
  const ctm = svg.getScreenCTM();
  if (!ctm) return;
  const pt = new DOMPoint(e.clientX, e.clientY).matrixTransform(ctm.inverse());
  const c = drag.copy;
  if (!c.isConnected || c.parentNode !== svg || svg.lastChild !== c) {
    for (const a of ["role", "aria-label", "data-src", "data-abs", "data-bar"]) c.removeAttribute(a);
    c.setAttribute("r", "21");
    c.setAttribute("class", `checker ${color} dragging`);
    c.setAttribute("aria-hidden", "true");
    svg.appendChild(c);                      // on top of the redrawn board
  }
  c.setAttribute("cx", pt.x);
  c.setAttribute("cy", pt.y);
}
