"""Hand-crafted inputs that a 198-input net has to discover on its own, as numba kernels.

Tesauro's raw encoding says where the checkers are; it does not say what that means for
the next roll: how many rolls hit a blot, how hard a back checker is to free, how much
contact is left. TD-Gammon 2 and gnubg add such inputs, and these are the classic ones
(in the spirit of gnubg's I_P1, I_BACKESCAPES, I_BREAK_CONTACT, I_BACK_ANCHOR, ...).
They are computed by our own code from the board alone, so a net that uses them is still
learned purely by self-play.

Each side gets the same values, computed with that side as "me" and the other as "opp",
each row in its own numbering (index 0..23 = points 1..24, 24 = the bar). Version 1's
PER_SIDE values come first, mine then the opponent's:
  0  shots      share of the opponent's 36 rolls that hit at least one of my blots
  1  escapes    share of my 36 rolls that carry my rearmost checker past every
                point the opponent holds in front of it (1 when nothing blocks it)
  2  contact    pips my checkers must travel to pass the opponent's rearmost one / 152
  3  back       point of my rearmost checker / 24 (bar = 25/24, none left = 0)
  4  anchor     point of my rearmost made point / 24 (0 when none)
  5  prime      longest run of my made points / 6
  6  home       my made home-board points / 6
  7  dance      (opponent's closed home points / 6)^2 when I have a checker on the bar
  8  pips       my pip count / 167
Version 2 appends EXTRA_PER_SIDE more, mine then the opponent's (in the spirit of gnubg's
I_PIPLOSS, I_CONTAIN and I_BACKG), so a version-1 net reads the first values unchanged:
  0  pip loss   mean over the opponent's 36 rolls of the pips my worst-hit blot loses / 24
                (0 for a roll that hits nothing)
  1  contain    the fewest escapes of a checker on any of my points 16..24 past the
                opponent's points within 12 pips in front of it (as gnubg's Escapes):
                how tightly they hold a checker of mine back there
  2  back       my made points in the opponent's home board (my 19..24) / 6
  3  outside    my checkers not yet in my home board / 15
Version 3 appends NEW_PER_SIDE more, mine then the opponent's, aimed at contact play (in
the spirit of gnubg's I_P2, I_FORWARD_ANCHOR, I_BUILDERS, I_MOBILITY and I_MOMENT2):
  0  double     share of the opponent's 36 rolls that hit two or more of my checkers
  1  forward    my most advanced made point in the opponent's home board: my 19 = 1,
                my 24 = 1/6, 0 when none
  2  builders   points within 6 pips above the next home point I want (6, 5, 4, 7, 3, 8:
                the first I have not made and the opponent does not hold) with a checker
                to spare for it / 6
  3  mobility   sum over my checkers outside my home board of (point - 6) times their
                escapes past the opponent's points within 12 pips in front / 100
  4  spread     mean squared distance of my checkers behind my mean point from it / 400
The shots counts are approximations that ignore the rule to use both dice and how many
checkers stand on a source point, as gnubg's own are; bar entry comes first, as the rules
require.
"""

from __future__ import annotations

import numpy as np
from engine.cache import cached_table, kernel

# Bump when any value below changes meaning; checkpoints of feature nets store it.
FEATURES_VERSION = 3
PER_SIDE = 9
EXTRA_PER_SIDE = 4
NEW_PER_SIDE = 5
N_FEATURES = 2 * (PER_SIDE + EXTRA_PER_SIDE + NEW_PER_SIDE)
# Inputs a net of each version reads: the first values of today's (see models.checkpoint).
FEATURE_COUNTS = {1: 2 * PER_SIDE, 2: 2 * (PER_SIDE + EXTRA_PER_SIDE), 3: N_FEATURES}
# The next home point to make, in order of worth (my indices: the 6, 5, 4, 7, 3, 8 points).
BUILD_ORDER = np.array([5, 4, 3, 6, 2, 7], dtype=np.int64)


@kernel(nogil=True, inline="always")
def _walk(sources, d, steps, open_, blots):
    """The blots that checkers at the bits of `sources` hit within `steps` moves of d pips.
    Bit t is the opponent's index t (24 = its bar); moving d pips is a shift right by d."""
    at = sources
    hit = np.int64(0)
    for _ in range(steps):
        at = (at >> d) & open_
        hit |= at & blots
    return hit


@kernel(nogil=True)
def _roll_hits(d1, d2, bar, checkers, open_, blots):
    """The blots the opponent, rolling d1-d2, can hit. Checkers on its bar enter first."""
    if d1 == d2:
        sources = checkers
        steps = 4
        hit = np.int64(0)
        if bar > 0:
            entry = np.int64(1) << (24 - d1)
            if not entry & open_:
                return hit
            hit = entry & blots
            steps = 4 - bar
            sources = checkers | entry
        if steps > 0:
            hit |= _walk(sources, d1, steps, open_, blots)
        return hit
    if bar >= 2:
        return ((np.int64(1) << (24 - d1)) | (np.int64(1) << (24 - d2))) & blots
    hit = np.int64(0)
    for order in range(2):
        a = d1 if order == 0 else d2
        b = d2 if order == 0 else d1
        if bar == 1:
            entry = np.int64(1) << (24 - a)
            if entry & open_:
                hit |= (entry & blots) | _walk(checkers | entry, b, 1, open_, blots)
        else:
            hit |= _walk(checkers, a, 1, open_, blots) | _walk(_reach(checkers, a, open_, blots), b, 1, open_, blots)
    return hit


@kernel(nogil=True, inline="always")
def _reach(sources, d, open_, blots):
    """Points the checkers at `sources` can move d pips to without hitting (to play on from)."""
    return (sources >> d) & open_ & ~blots


@kernel(nogil=True)
def _shot_masks(me, opp):
    """(my blots, the points open to the opponent, its checkers, its points with two or
    more), as bits of its index t (my index 23 - t)."""
    blots = np.int64(0)
    open_ = np.int64(0)
    checkers = np.int64(0)
    spare = np.int64(0)
    for t in range(24):
        mine = me[23 - t]
        if mine == 1:
            blots |= np.int64(1) << t
        if mine < 2:
            open_ |= np.int64(1) << t
        if opp[t] > 0:
            checkers |= np.int64(1) << t
        if opp[t] > 1:
            spare |= np.int64(1) << t
    return blots, open_, checkers, spare


@kernel(nogil=True)
def _doubles_hit_twice(d, bar, checkers, open_, blots):
    """Can the opponent, rolling d-d, hit two of my blots? One checker may hit twice on its
    way; else each blot costs the moves to reach it first, and the two cheapest must fit
    in the moves left after entering."""
    budget = 4
    at = checkers
    entered = np.int64(0)
    if bar > 0:
        entry = np.int64(1) << (24 - d)
        if not entry & open_:
            return False
        budget = max(0, 4 - bar)
        entered = entry & blots  # hit while entering: no move of the budget spent
        at = checkers | entry
    hitter = entered  # where a checker that has hit once can stand
    first = -1
    reached = entered
    for step in range(1, budget + 1):
        at = (at >> d) & open_
        if (hitter >> d) & blots:
            return True
        hitter = ((hitter >> d) & open_) | (at & blots)
        new = at & blots & ~reached
        reached |= new
        while new:
            new &= new - 1
            if entered:
                return True
            if first < 0:
                first = step
            elif first + step <= budget:
                return True
    return False


@kernel(nogil=True)
def _hits_twice(d1, d2, bar, checkers, spare, open_, blots):
    """Can the opponent, rolling d1-d2, hit two of my blots in one play?"""
    if d1 == d2:
        return _doubles_hit_twice(d1, bar, checkers, open_, blots)
    if bar >= 2:  # both dice enter
        return bool((np.int64(1) << (24 - d1)) & blots) and bool((np.int64(1) << (24 - d2)) & blots)
    for order in range(2):
        a = d1 if order == 0 else d2
        b = d2 if order == 0 else d1
        if bar == 1:
            entry = np.int64(1) << (24 - a)
            if entry & blots and _walk(checkers | entry, b, 1, open_, blots) & ~entry:
                return True
            continue
        first = _walk(checkers, a, 1, open_, blots)
        while first:  # each blot x the die a hits, from the point a pips behind it
            x = first & -first
            first &= first - 1
            after = (checkers if (x << a) & spare else checkers & ~(x << a)) | x
            if _walk(after, b, 1, open_, blots) & ~x:
                return True
    return False


@kernel(nogil=True)
def shot_stats(me, opp):
    """(share of the opponent's 36 rolls that hit a blot of mine, mean pips my worst-hit
    blot loses over the 36 rolls, share of the rolls that hit two of my blots). A blot at
    the opponent's index t loses t + 1 pips."""
    blots, open_, checkers, spare = _shot_masks(me, opp)
    if blots == 0:
        return 0.0, 0.0, 0.0
    several = blots & (blots - 1) != 0
    hits = 0
    loss = 0
    doubles = 0
    for d1 in range(1, 7):
        for d2 in range(d1, 7):
            hit = _roll_hits(d1, d2, opp[24], checkers, open_, blots)
            if hit:  # a roll that hits twice hits once first
                weight = 1 if d1 == d2 else 2
                worst = 23
                while not (hit >> worst) & 1:
                    worst -= 1
                hits += weight
                loss += weight * (worst + 1)
                if several and _hits_twice(d1, d2, opp[24], checkers, spare, open_, blots):
                    doubles += weight
    return hits / 36.0, loss / 36.0, doubles / 36.0


@kernel(nogil=True)
def double_shots(me, opp):
    """Share of the opponent's 36 rolls that hit two or more of my blots."""
    return shot_stats(me, opp)[2]


@kernel(nogil=True)
def shots(me, opp):
    """Share of the opponent's 36 rolls that hit at least one of my blots."""
    return shot_stats(me, opp)[0]


@kernel(nogil=True, inline="always")
def _blocked(opp, i):
    """Does the opponent hold my index i (its index 23 - i)?"""
    return i >= 0 and opp[23 - i] >= 2


@kernel(nogil=True)
def escapes(me, opp, p):
    """Share of my 36 rolls that carry a checker at my index p (24 = bar) past every
    opponent point in front of it; landing and touching points must be open."""
    front = -1
    for i in range(p - 1, -1, -1):
        if _blocked(opp, i):
            front = i
    if front < 0:
        return 1.0
    count = 0
    for d1 in range(1, 7):
        for d2 in range(d1, 7):
            ok = False
            if d1 == d2:
                at = p
                for _ in range(4):
                    at -= d1
                    if _blocked(opp, at):
                        break
                    if at < front:
                        ok = True
                        break
            else:
                for order in range(2):
                    a = d1 if order == 0 else d2
                    if p - a < front and not _blocked(opp, p - a):
                        ok = True
                    elif not _blocked(opp, p - a) and p - d1 - d2 < front and not _blocked(opp, p - d1 - d2):
                        ok = True
            if ok:
                count += 1 if d1 == d2 else 2
    return count / 36.0


@kernel
def _escape_table():
    """escapes() past the points held within 12 pips, for each of their 4,096 patterns:
    bit k of a pattern = the point k + 1 pips in front is held (gnubg's anEscapes)."""
    table = np.zeros(4096)
    me = np.zeros(25, dtype=np.int8)
    for held in range(4096):
        opp = np.zeros(25, dtype=np.int8)
        for k in range(12):
            if held >> k & 1:
                opp[12 + k] = 2  # my index 11 - k, the opponent's 12 + k
        table[held] = escapes(me, opp, 12)
    return table


ESCAPE_TABLE = cached_table(f"escape-table-v{FEATURES_VERSION}", _escape_table)


@kernel(nogil=True)
def _escape_share(held, i):
    """escapes() for a checker on my index i, given held (bit j: the opponent holds its index
    j): the points 1..12 pips in front of my index i are the opponent's 24 - i + k."""
    return ESCAPE_TABLE[(held >> (24 - i)) & 4095]


@kernel(nogil=True)
def _builders(me, opp):
    """Points within 6 pips above the next home point I want with a checker to spare for it
    (a blot, a third checker, or a pair beyond my 8 point), over 6."""
    for j in BUILD_ORDER:
        if me[j] < 2 and opp[23 - j] < 2:
            count = 0
            for k in range(j + 1, j + 7):
                if me[k] == 1 or me[k] > 2 or (k > 7 and me[k] == 2):
                    count += 1
            return count / 6.0
    return 0.0


@kernel(nogil=True)
def half_features(me, opp, out, o, o2, o3):
    """Write my PER_SIDE values into out[o:o + PER_SIDE], my EXTRA_PER_SIDE into out[o2:]
    and my NEW_PER_SIDE into out[o3:]."""
    opp_rear = -1
    closed = 0
    held = np.int64(0)  # bit j: the opponent holds its index j
    for i in range(25):
        if opp[i] > 0:
            opp_rear = i
            if i < 6 and opp[i] >= 2:
                closed += 1
            if i < 24 and opp[i] >= 2:
                held |= np.int64(1) << i
    # The opponent's rearmost checker sits at my index 23 - opp_rear (the bar: -1).
    line = 23 - opp_rear if opp_rear >= 0 else 24
    rear = -1
    pips = 0
    contact = 0
    anchor = 0
    run = 0
    prime = 0
    home = 0
    back = 0
    outside = 0
    forward = 0
    mobility = 0.0
    for i in range(25):
        n = np.int64(me[i])
        if n == 0:
            run = 0
            continue
        rear = i
        pips += (i + 1) * n
        if i >= 6:
            outside += n
            mobility += (i - 5) * n * _escape_share(held, i)
        if 18 <= i < 24 and n >= 2:
            back += 1
            if forward == 0:
                forward = 24 - i
        if i > line:
            contact += (i - line) * n
        if n >= 2 and i < 24:
            anchor = i + 1
            run += 1
            if run > prime:
                prime = run
            if i < 6:
                home += 1
        else:
            run = 0
    hit_share, pip_loss, double = shot_stats(me, opp)
    contain = 1.0
    for p in range(15, 24):
        contain = min(contain, _escape_share(held, p))
    mean = pips / 15.0 - 1.0  # my mean index, borne-off checkers counting as index -1
    behind = 0
    spread = 0.0
    for i in range(25):
        if me[i] > 0 and i > mean:
            behind += me[i]
            spread += me[i] * (i - mean) * (i - mean)
    out[o + 0] = hit_share
    out[o + 1] = escapes(me, opp, rear) if rear >= 0 else 1.0
    out[o + 2] = contact / 152.0
    out[o + 3] = (rear + 1) / 24.0
    out[o + 4] = anchor / 24.0
    out[o + 5] = prime / 6.0
    out[o + 6] = home / 6.0
    out[o + 7] = (closed / 6.0) * (closed / 6.0) if me[24] > 0 else 0.0
    out[o + 8] = pips / 167.0
    out[o2 + 0] = pip_loss / 24.0
    out[o2 + 1] = contain
    out[o2 + 2] = back / 6.0
    out[o2 + 3] = outside / 15.0
    out[o3 + 0] = double
    out[o3 + 1] = forward / 6.0
    out[o3 + 2] = _builders(me, opp)
    out[o3 + 3] = mobility / 100.0
    out[o3 + 4] = spread / behind / 400.0 if behind else 0.0


@kernel(nogil=True)
def write_features(board, out, o):
    """Write the N_FEATURES values of one afterstate (row 0 = us) into out[o:o + N_FEATURES]."""
    extra = o + 2 * PER_SIDE
    new = extra + 2 * EXTRA_PER_SIDE
    half_features(board[0], board[1], out, o, extra, new)
    half_features(board[1], board[0], out, o + PER_SIDE, extra + EXTRA_PER_SIDE, new + NEW_PER_SIDE)
