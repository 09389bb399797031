"""Rollouts: play a position out many times with the engine and average the results.

See docs/rollouts.md. `core` plays trials in lock-step (quasi-random dice, variance
reduction by each roll's luck, truncation, cubeful money play); `runner` schedules
batches of trials on a backend (in-process, worker processes, Ray), stops early, saves
and resumes, and rolls out the candidate plays of a roll.
"""
