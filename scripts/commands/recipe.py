"""`tdgammon recipe`: every stage of a model (TD, distillation rounds with gates, widening,
ensemble) from one TOML file, resumable at any point (training.recipe)."""

from __future__ import annotations

import argparse
from pathlib import Path

from engine.errors import ConfigError


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "recipe", help="train a model from scratch: every stage of a recipe, resumable",
        description="Run a recipe (configs/recipe.toml is the shipped model's, configs/recipe-smoke.toml "
                    "a 10-minute one): TD(lambda) stages per member, search-distillation rounds each "
                    "kept only if its gate says better, widening, the ensemble. Killed at any point, "
                    "the same command continues from the step in progress. OUT/manifest.json records "
                    "every artefact; OUT/model.pt and OUT/MODEL_CARD.md are the result.")
    parser.add_argument("config", type=Path, help="the recipe TOML file")
    parser.add_argument("--out", type=Path, required=True, help="the run's directory (resumes if it exists)")
    parser.add_argument("--workers", type=int, default=1,
                        help="processes (local) for teacher values, gates and pits (default 1: bit-for-bit "
                             "reproducible; more give the same result, sooner)")
    parser.add_argument("--backend", choices=("local", "ray"), default="local",
                        help="where teacher values, gates and pits run: local processes, or Ray tasks "
                             "(pip install -e '.[distributed]')")
    parser.add_argument("--ray-address", metavar="auto|HOST:PORT",
                        help="Ray cluster to join (default with --backend ray: start a local one)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars (for logs)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from training.recipe import RecipeRun
    from training.recipe_config import load_recipe
    from training.recipe_tasks import make_executor

    if args.workers < 1:
        raise ConfigError("--workers must be at least 1")
    if args.ray_address is not None and args.backend != "ray":
        raise ConfigError("--ray-address needs --backend ray")
    recipe = load_recipe(args.config)
    executor = make_executor(args.backend, args.workers, args.ray_address)
    try:
        entry = RecipeRun(recipe, args.out, executor, progress=not args.no_progress).run()
    finally:
        executor.close()
    random, pubeval = entry["random"], entry["pubeval"]
    print(f"model: {args.out / 'model.pt'} (from round {entry['from_round']}); 1-ply vs random "
          f"{100 * random['win_rate']:.1f}% wins, vs pubeval {pubeval['ppg']:+.3f} ± {pubeval['ci95']:.3f} ppg "
          f"over {pubeval['games']:,} games; card: {args.out / 'MODEL_CARD.md'}")
    return 0
