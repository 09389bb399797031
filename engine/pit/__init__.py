"""Pits: two players over many games with duplicate dice, and their statistics."""
