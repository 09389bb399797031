"""engine.game.EvaluatorPlayer chooses exactly as engine.search.rank_plays at 1-ply."""

import numpy as np

from engine.evaluator import equity
from engine.game import EvaluatorPlayer, RandomPlayer, play_game
from engine.notation import play_list
from engine.position import Position, is_race
from engine.pubeval import PubevalEvaluator
from engine.evaluator import RandomEvaluator
from engine.search import rank_plays

# Contact before the move; pubeval's 1-ply choice depends on using the contact weights
# (the flag rank_plays passes) rather than each afterstate's own race status.
BREAKS_CONTACT = [("/3UMAAA9Q8wJBA", (2, 4)), ("t28AAOD9IQAwCA", (5, 3)), ("Xx8AAPCnADkABg", (6, 6))]


def _chosen(player, position, dice):
    plays = play_list(position, dice)
    return plays.afterstates[player.choose(position, dice, plays)]


def test_pubeval_player_uses_the_pre_move_race_flag():
    ev = PubevalEvaluator()
    player = EvaluatorPlayer(ev)
    for pid, dice in BREAKS_CONTACT:
        position = Position.from_id(pid)
        assert not is_race(position.board)
        plays = play_list(position, dice)
        by_afterstate = plays.afterstates[int(np.argmax(equity(ev.evaluate(plays.afterstates))))]
        best = rank_plays(position.board, dice, ev, 1)[0].afterstate
        assert not (by_afterstate == best).all()          # the flag matters here
        assert (_chosen(player, position, dice) == best).all()


def test_same_choice_as_rank_plays_over_random_games():
    for evaluator in (PubevalEvaluator(), RandomEvaluator(5)):
        player = EvaluatorPlayer(evaluator)
        checked = 0
        for seed in range(6):
            record = play_game(RandomPlayer(np.random.default_rng(seed)),
                               RandomPlayer(np.random.default_rng(seed + 50)), np.random.default_rng(seed))
            for turn in record.turns:
                if turn.play is None or len(play_list(turn.position, turn.dice)) < 2:
                    continue
                if isinstance(evaluator, RandomEvaluator):
                    evaluator.rng = np.random.default_rng(checked)
                    best = rank_plays(turn.position.board, turn.dice, evaluator, 1)[0].afterstate
                    evaluator.rng = np.random.default_rng(checked)
                else:
                    best = rank_plays(turn.position.board, turn.dice, evaluator, 1)[0].afterstate
                assert (_chosen(player, turn.position, turn.dice) == best).all(), (turn.position.id, turn.dice)
                checked += 1
        assert checked > 100
