"""The JSON bodies the games API accepts; their names and fields are the OpenAPI schemas."""

from __future__ import annotations

from pydantic import BaseModel, Field


class NewGame(BaseModel):
    mode: str = Field("computer", description="'computer', 'hotseat' or 'friend'")
    level: str = Field("medium", description="computer strength: 'easy' (1-ply with noise), "
                                             "'medium' (1-ply) or 'hard' (2-ply over the 21 rolls)")
    color: str = Field("white", description="your colour: 'white' or 'black' (vs computer and friend)")
    cube: bool = Field(False, description="play with the doubling cube: money play, cube centred at 1, "
                                          "Jacoby and beavers off; results count the cube value")
    match: int = Field(0, ge=0, le=25, description="0: single games; 1-25: a match to that many points, "
                                                   "with the cube, the Crawford rule and the next game "
                                                   "dealt when one ends")


class TokenBody(BaseModel):
    token: str = Field(..., description="the seat token returned when the game was created or joined")


class StepBody(TokenBody):
    from_point: int = Field(..., alias="from", ge=0, le=25,
                            description="source point in the mover's numbering; 25 = bar")
    to_point: int = Field(..., alias="to", ge=0, le=25,
                          description="destination point in the mover's numbering; 0 = off")
    die: int | None = Field(None, ge=1, le=6, description="the die to use, when two dice fit")


class ResignBody(TokenBody):
    points: int = Field(1, ge=1, le=3, description="1 single game, 2 gammon, 3 backgammon (2 and 3 "
                                                   "only with the cube); times the cube value")


class HintsBody(TokenBody):
    allow: bool = Field(..., description="true: you allow hints in this friend game; false: you withdraw")
