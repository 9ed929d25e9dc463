"""Map Task (Anderson et al. 1991, HCRC): a guide talks a follower through a route it cannot see.

The guide's map has a route (a 4-connected path of straight legs from a start to a finish
cell) and named landmarks; the follower's map has the start cell and the landmarks only, and
a few of the guide's landmarks are missing from it (the HCRC maps disagree too, which is where
grounding fails). The guide can only talk. The follower draws cells on its canvas: the first
cell of an empty canvas must be the start, and every later cell must touch (4-adjacently) a
drawn one, so the drawing grows as a line from the start. It can also erase a cell, undo its
last draw or erase, and reset the canvas. The run completes when the finish cell is drawn.

Scoring follows CollabSim: a drawn cell weighs 3 on the route, 2 at Chebyshev distance 1 from
the route and 1 at distance 2; the score is the weight of the final canvas over 3 x the route
length, so extra cells can push it above 1. Precision and recall are added to see why.
"""

from __future__ import annotations

import random

from incognita.collabsim.world.task import Context, Task, whole_number
from incognita.common.io import InputError

DRAW, ERASE, UNDO, RESET = "draw", "erase", "undo", "reset"
DRAWING = (DRAW, ERASE, UNDO, RESET)
GUIDE, FOLLOWER = "guide", "follower"
DIRECTIONS = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}  # y grows downward
DEFAULTS = {
    "width": 60,
    "height": 40,
    "min_route": 60,
    "max_route": 120,
    "min_leg": 3,
    "max_leg": 12,
    "min_landmarks": 8,
    "max_landmarks": 12,
    "missing_landmarks": 2,
}
# No name holds a direction word, "back", "then", "and", a comma or a digit: the follower's
# instructions are parsed by those words.
LANDMARK_NAMES = (
    "old mill",
    "stone well",
    "fallen oak",
    "red barn",
    "windmill",
    "fishing pond",
    "wooden bridge",
    "chapel",
    "orchard",
    "quarry",
    "watchtower",
    "ruined abbey",
    "lighthouse",
    "sheep pen",
    "haystack",
    "graveyard",
    "boathouse",
    "forge",
    "beacon",
    "market cross",
)
MARGIN = 2  # the route keeps this far from the edge so landmarks fit beside it
SEPARATION = 3  # legs that are not consecutive stay this far apart (Chebyshev)
Cell = tuple[int, int]


# --- materials ------------------------------------------------------------------------------
def chebyshev(a: Cell, b: Cell) -> int:
    return max(abs(a[0] - b[0]), abs(a[1] - b[1]))


def step(cell: Cell, direction: str, n: int = 1) -> Cell:
    dx, dy = DIRECTIONS[direction]
    return cell[0] + dx * n, cell[1] + dy * n


def perpendicular(direction: str) -> tuple[str, str]:
    return ("left", "right") if direction in ("up", "down") else ("up", "down")


def opposite(direction: str) -> str:
    return {"up": "down", "down": "up", "left": "right", "right": "left"}[direction]


def leg_cells(start: Cell, legs: list[dict]) -> list[Cell]:
    """The route's cells in order: the start, then every leg's cells after its corner."""
    cells = [start]
    for leg in legs:
        cells += [step(cells[-1], leg["direction"], i) for i in range(1, leg["cells"] + 1)]
    return cells


def make_route(p: dict, rng: random.Random, attempts: int = 500) -> tuple[Cell, list[dict]]:
    """A start cell and straight legs, each turning left or right from the one before.

    A leg's cells stay SEPARATION away from every leg but the one it turns from, so the route
    never crosses or brushes itself and a cell one or two off it is off exactly one part of it.
    """
    target = rng.randint(p["min_route"], p["max_route"] - p["max_leg"])
    for _ in range(attempts):
        start = (rng.randint(MARGIN, p["width"] - 1 - MARGIN), rng.randint(MARGIN, p["height"] - 1 - MARGIN))
        legs = _grow(start, target, p, rng)
        if legs is not None:
            return start, legs
    raise InputError(
        f"map_task: no route of {p['min_route']}-{p['max_route']} cells fits a "
        f"{p['width']}x{p['height']} grid with legs of {p['min_leg']}-{p['max_leg']} cells"
    )


def _grow(start: Cell, target: int, p: dict, rng: random.Random) -> list[dict] | None:
    cells, legs, prev_len = [start], [], 0
    while len(cells) <= target:
        options = list(DIRECTIONS) if not legs else list(perpendicular(legs[-1]["direction"]))
        rng.shuffle(options)
        n = rng.randint(p["min_leg"], p["max_leg"])
        old = cells[: len(cells) - prev_len - 1] if legs else []
        leg = next((d for d in options if _fits(cells[-1], d, n, old, p)), None)
        if leg is None:
            return None
        cells += [step(cells[-1], leg, i) for i in range(1, n + 1)]
        legs.append({"direction": leg, "cells": n})
        prev_len = n
    return legs


def _fits(corner: Cell, direction: str, n: int, old: list[Cell], p: dict) -> bool:
    for i in range(1, n + 1):
        x, y = step(corner, direction, i)
        if not (MARGIN <= x < p["width"] - MARGIN and MARGIN <= y < p["height"] - MARGIN):
            return False
        if any(chebyshev((x, y), c) < SEPARATION for c in old):
            return False
    return True


def place_landmarks(start: Cell, legs: list[dict], p: dict, rng: random.Random) -> dict[str, Cell]:
    """Named landmarks beside the route, 1-2 cells off it at right angles to a leg.

    Most sit outside a corner (behind the turn), so the leg ends at the cell of its line that
    is closest to the landmark; the rest sit beside the middle of a long leg.
    """
    cells = leg_cells(start, legs)
    on_route = set(cells)
    ends = [sum(leg["cells"] for leg in legs[: k + 1]) for k in range(len(legs))]  # route index of each leg's end
    spots = []
    for k, leg in enumerate(legs):
        away = opposite(legs[k + 1]["direction"]) if k + 1 < len(legs) else rng.choice(perpendicular(leg["direction"]))
        spots.append((cells[ends[k]], away))
    rng.shuffle(spots)
    middles = [
        (cells[ends[k] - leg["cells"] // 2], rng.choice(perpendicular(leg["direction"])))
        for k, leg in enumerate(legs)
        if leg["cells"] >= 6
    ]
    rng.shuffle(middles)
    wanted = rng.randint(p["min_landmarks"], p["max_landmarks"])
    placed: list[Cell] = []
    for cell, away in spots + middles:
        spot = step(cell, away, rng.choice((1, 2)))
        if len(placed) < wanted and _free(spot, on_route, placed, p):
            placed.append(spot)
    names = rng.sample(LANDMARK_NAMES, len(placed))
    return dict(sorted(zip(names, placed)))


def _free(spot: Cell, on_route: set[Cell], placed: list[Cell], p: dict) -> bool:
    inside = 0 <= spot[0] < p["width"] and 0 <= spot[1] < p["height"]
    return inside and spot not in on_route and all(chebyshev(spot, q) >= 2 for q in placed)


# --- scoring --------------------------------------------------------------------------------
def cell_weight(cell: Cell, route: list[Cell]) -> int:
    """3 on the route, 2 at Chebyshev distance 1, 1 at distance 2, else 0."""
    return max(0, 3 - min(chebyshev(cell, r) for r in route))


def route_scores(canvas: list[Cell], route: list[Cell]) -> dict[str, float]:
    nan = float("nan")
    on = set(route)
    hits = sum(1 for c in canvas if c in on)
    return {
        "route_score": sum(cell_weight(c, route) for c in canvas) / (3 * len(route)),
        "route_precision": hits / len(canvas) if canvas else nan,
        "route_recall": hits / len(route),
    }


# --- the task -------------------------------------------------------------------------------
class MapTask(Task):
    name = "map_task"
    title = "Map Task"
    actions = {GUIDE: (), FOLLOWER: DRAWING}
    METRICS = (
        "route_score",
        "route_precision",
        "route_recall",
        "revision_rate",
        "communication_efficiency",
        "completed",
    )
    DEFAULTS = DEFAULTS  # the module's table, checked by Task.check_params

    def __init__(self, params, agents, rng):
        super().__init__(params, agents, rng)
        p = self.params
        self.start_cell, self.legs = make_route(p, rng)
        self.route = leg_cells(self.start_cell, self.legs)
        self.landmarks = place_landmarks(self.start_cell, self.legs, p, rng)
        missing = set(rng.sample(sorted(self.landmarks), min(p["missing_landmarks"], len(self.landmarks))))
        self.follower_landmarks = {n: c for n, c in self.landmarks.items() if n not in missing}
        self.canvas: dict[Cell, int] = {}  # drawn cell -> its place in the drawing order
        self.order = 0
        self.history: list[tuple[str, Cell, int]] = []  # (draw|erase, cell, order) for undo

    @classmethod
    def check_params(cls, params, agents, where):
        super().check_params(params, agents, where)
        p = {**DEFAULTS, **params}
        roles = sorted(a.role for a in agents)
        if roles != [FOLLOWER, GUIDE]:
            raise InputError(f"{where}: map_task needs exactly one guide and one follower (got {', '.join(roles)})")
        if not 1 <= p["min_leg"] <= p["max_leg"] or p["min_route"] > p["max_route"] - p["max_leg"]:
            raise InputError(f"{where}: need 1 <= min_leg <= max_leg and min_route <= max_route - max_leg")
        if not 0 <= p["missing_landmarks"] <= p["min_landmarks"] <= p["max_landmarks"] <= len(LANDMARK_NAMES):
            raise InputError(
                f"{where}: need 0 <= missing_landmarks <= min_landmarks <= max_landmarks <= {len(LANDMARK_NAMES)}"
            )
        try:
            make_route(p, random.Random(0))
        except InputError as exc:
            raise InputError(f"{where}: {exc}") from None

    @property
    def finish(self) -> Cell:
        return self.route[-1]

    def drawn(self) -> list[Cell]:
        return sorted(self.canvas, key=self.canvas.__getitem__)

    # --- the run ------------------------------------------------------------------------------
    def start(self, ctx: Context) -> None:
        p = self.params
        ctx.emit(
            "state", "system", {"event": "setup", "grid": [p["width"], p["height"]], "start": list(self.start_cell)}
        )
        for agent in self.agents:
            ctx.emit("private", "system", {"event": "map", **self._map(agent.id)}, [agent.id])
        ctx.emit("phase", "system", {"phase": "play"})

    def _map(self, agent: str) -> dict:
        if self.role[agent] == GUIDE:
            corners = leg_cells(self.start_cell, self.legs)
            ends = [sum(leg["cells"] for leg in self.legs[: k + 1]) for k in range(len(self.legs))]
            legs = [
                {"direction": leg["direction"], "cells": leg["cells"], "to": list(corners[e])}
                for leg, e in zip(self.legs, ends)
            ]
            return {
                "start": list(self.start_cell),
                "finish": list(self.finish),
                "route_length": len(self.route),
                "route": legs,
                "landmarks": {n: list(c) for n, c in self.landmarks.items()},
            }
        return {"start": list(self.start_cell), "landmarks": {n: list(c) for n, c in self.follower_landmarks.items()}}

    @classmethod
    def argument_schemas(cls, params, agent_ids):
        cell = {"x": whole_number(0, params["width"] - 1), "y": whole_number(0, params["height"] - 1)}
        return {DRAW: cell, ERASE: cell, UNDO: {}, RESET: {}}

    def validate(self, agent, action, args):
        if action in (DRAW, ERASE):
            cell, problem = self._cell(args)
            if problem:
                return problem
            if action == ERASE:
                return None if cell in self.canvas else f"cell {list(cell)} is not drawn"
            return self._draw_problem(cell)
        if action == UNDO and not self.history:
            return "nothing to undo"
        if action == RESET and not self.canvas:
            return "the canvas is already empty"
        return None

    def _cell(self, args: dict) -> tuple[Cell, str | None]:
        x, y = args.get("x"), args.get("y")
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (x, y)):
            return (0, 0), "'x' and 'y' must be whole numbers"
        w, h = self.params["width"], self.params["height"]
        if not (0 <= x < w and 0 <= y < h):
            return (x, y), f"cell [{x}, {y}] is outside the {w}x{h} grid (x 0-{w - 1}, y 0-{h - 1})"
        return (x, y), None

    def _draw_problem(self, cell: Cell) -> str | None:
        if cell in self.canvas:
            return f"cell {list(cell)} is already drawn"
        if not self.canvas:
            return None if cell == self.start_cell else f"the first cell must be the start {list(self.start_cell)}"
        x, y = cell
        if not any((x + dx, y + dy) in self.canvas for dx, dy in DIRECTIONS.values()):
            return f"cell {list(cell)} does not touch a drawn cell (draw next to your line)"
        return None

    def apply(self, ctx, agent, action, args):
        if action == DRAW:
            cell = (args["x"], args["y"])
            self.canvas[cell] = self.order
            self.history.append((DRAW, cell, self.order))
            self.order += 1
        elif action == ERASE:
            cell = (args["x"], args["y"])
            self.history.append((ERASE, cell, self.canvas.pop(cell)))
        elif action == UNDO:
            self._undo(ctx, agent)
        elif action == RESET:
            ctx.emit("state", agent, {"event": "canvas_reset", "cleared": len(self.canvas)}, [agent])
            self.canvas, self.history = {}, []
        if action != RESET and self.finish in self.canvas:
            ctx.emit("state", "system", {"event": "finish_reached", "cell": list(self.finish)})

    def _undo(self, ctx: Context, agent: str) -> None:
        """Revert the last draw or erase; an erased cell returns to its old place in the order."""
        kind, cell, order = self.history.pop()
        if kind == DRAW:
            del self.canvas[cell]
        else:
            self.canvas[cell] = order
        ctx.emit("state", agent, {"event": "undone", "reverted": kind, "cell": list(cell)}, [agent])

    def done(self) -> bool:
        return self.finish in self.canvas

    def observation(self, agent, observed):
        p = self.params
        view = {"grid": {"width": p["width"], "height": p["height"]}, **self._map(agent)}
        if self.role[agent] == FOLLOWER:
            view["canvas"] = [list(c) for c in self.drawn()]
            view["can_undo"] = bool(self.history)
        # The guide has no canvas: observing it adds nothing beyond its actions.
        canvases = {a: [list(c) for c in self.drawn()] for a in observed if self.role[a] == FOLLOWER}
        if canvases:
            view["canvas_of"] = canvases
        return view

    def probe_truth(self, agent: str) -> dict:
        """The share of the route drawn right now (route cells on the canvas / route length)."""
        on_route = set(self.route)
        return {"route_progress": round(sum(c in on_route for c in self.canvas) / len(self.route), 4)}

    def final_state(self):
        return {
            "route": [list(c) for c in self.route],
            "canvas": [list(c) for c in self.drawn()],
            "finish_drawn": self.done(),
        }

    @staticmethod
    def metrics(events):
        return map_task_metrics(events)


def map_task_metrics(events: list[dict]) -> dict[str, float]:
    start = next(e for e in events if e["kind"] == "run_start")
    followers = {a["id"] for a in start["payload"]["agents"] if a["role"] == FOLLOWER}
    final = events[-1]["payload"]["final_state"]
    route = [tuple(c) for c in final["route"]]
    canvas = [tuple(c) for c in final["canvas"]]
    drawing = [
        e["payload"]["action"]
        for e in events
        if e["kind"] == "action" and e["actor"] in followers and e["payload"]["action"] in DRAWING
    ]
    revisions = sum(1 for a in drawing if a != DRAW)
    messages = sum(1 for e in events if e["kind"] == "message")
    scores = route_scores(canvas, route)
    return {
        **scores,
        "revision_rate": revisions / len(drawing) if drawing else float("nan"),
        "communication_efficiency": scores["route_score"] / messages if messages else float("nan"),
        "completed": 1.0 if route[-1] in set(canvas) else 0.0,
    }


TASK = MapTask
