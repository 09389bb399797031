// The last move played, step by step: the boards from the one it was played from to the one it
// reached, for the page to show one after the other. A step that lands on a lone opposing
// checker hits it (it goes to the bar), as the rules say, so the frames need no hit flags.
import { absPoint } from "/static/board.js";

const clone = (b) => ({ points: [...b.points], bar: { ...b.bar }, off: { ...b.off } });

// last: the state's last_move ({side, steps: [[from, to], ...] in the mover's numbering, before}).
export function replayFrames(last) {
  const side = last.side, sign = side === "white" ? 1 : -1, other = side === "white" ? "black" : "white";
  const frames = [clone(last.before)];
  for (const [from, to] of last.steps) {
    const b = clone(frames[frames.length - 1]);
    if (from === 25) b.bar[side] -= 1;
    else b.points[absPoint(side, from) - 1] -= sign;
    if (to === 0) b.off[side] += 1;
    else {
      const i = absPoint(side, to) - 1;
      if (b.points[i] === -sign) { b.points[i] = 0; b.bar[other] += 1; }
      b.points[i] += sign;
    }
    frames.push(b);
  }
  return frames;
}
