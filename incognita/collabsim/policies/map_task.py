"""A guide who describes the route leg by leg, and a follower who draws what it is told.

Guide knobs: `granularity` (at most this many cells of route per instruction message; longer
legs are cut), `repair` (each turn it sees the follower's canvas end off the route, the chance
it says so: "no, go back 3, then down 2") and `patience` (steps it waits for the follower to
answer before going on). Follower knobs: `slip` (the chance per cell of a mis-drawn
instruction: one cell too many or too few, a sideways jog, or turning the wrong way), `check`
(the chance it acts on a correction: a guide's repair, or its own finding that a named landmark
is not beside the cell where it stopped) and `batch` (drawing actions it sends per turn; lowered
if the engine refuses more).

Directions, known in advance: more `granularity` means fewer messages and higher
communication_efficiency; more `slip` lowers route_score and completed and raises
revision_rate; more `check` raises route_score and completed; more `repair` (only with a
visible canvas) raises route_score and completed. `check` and `repair` also take revision_rate
up from zero, but not steadily near 1: a divergence caught sooner leaves fewer cells to erase.
The conditions act through mechanics only: a word limit refuses long messages, after which the
guide packs fewer legs per message (more messages for the same route); a visible canvas is
simply present in the guide's observation, and only then can it repair.
"""

from __future__ import annotations

import re
from collections import deque

from incognita.collabsim.policies import Policy
from incognita.collabsim.tasks.map_task import DIRECTIONS, opposite, perpendicular, step

Cell = tuple[int, int]
WORD_LIMIT = re.compile(r"limit of (\d+) words")
TURN_LIMIT = re.compile(r"at most (\d+) action")
ALIASES = {"north": "up", "south": "down", "west": "left", "east": "right"}
MOVE = re.compile(r"\b(up|down|left|right|north|south|east|west)\s+(\d+)")
BACK = re.compile(r"\bback\s+(\d+)")
ACK = "done, what next?"
MAX_REPAIRS = 2  # repairs per instruction before the guide lets a divergence stand and goes on


def learned_limit(events: list[dict], me: str, current: int | None) -> int | None:
    """The word limit, read from the reason of a refused message of mine."""
    for e in events:
        if e["kind"] == "message_rejected" and e["actor"] == me:
            m = WORD_LIMIT.search(str(e.get("reason", "")))
            if m:
                current = int(m.group(1))
    return current


def cell(value: list) -> Cell:
    return int(value[0]), int(value[1])


# --- guide ----------------------------------------------------------------------------------
class Guide(Policy):
    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.route: list[Cell] = []
        self.units: list[tuple[int, int, str, str | None]] = []  # (from index, to index, direction, landmark)
        self.instructed = 0  # the route index its instructions have reached
        self.waiting_since: int | None = None
        self.repaired = False  # a repair is out and the follower has not answered yet
        self.repairs = 0  # repairs since the last plain instruction
        self.limit: int | None = None
        self.sent: tuple[int, bool, int] | None = None  # state to restore if the last message is refused

    def decide(self, obs: dict) -> list[dict]:
        state, me = obs["state"], obs["you"]
        if not self.route:
            self.learn_map(state)
        self.read_events(obs["events"], me)
        if self.waiting_since is not None and obs["step"] - self.waiting_since >= self.knob("patience", 12):
            self.waiting_since = None
        canvas = next(iter(state.get("canvas_of", {}).values()), None)
        message = self.next_message([cell(c) for c in canvas] if canvas is not None else None)
        if message is None:
            return [{"action": "do_nothing"}]
        self.waiting_since = obs["step"]
        return [{"action": "message", "to": "all", "text": message}]

    def learn_map(self, state: dict) -> None:
        start = cell(state["start"])
        self.route = [start]
        for leg in state["route"]:
            self.route += [step(self.route[-1], leg["direction"], i) for i in range(1, leg["cells"] + 1)]
        self.index = {c: i for i, c in enumerate(self.route)}
        self.landmarks = {n: cell(c) for n, c in state["landmarks"].items()}
        self.units = self.cut(state["route"])

    def cut(self, legs: list[dict]) -> list[tuple[int, int, str, str | None]]:
        """Legs cut at landmarks beside them and at `granularity` cells."""
        size = max(int(self.knob("granularity", 16)), 1)
        units, at = [], 0
        for leg in legs:
            end, begin = at + leg["cells"], at
            for i in range(at + 1, end + 1):
                mark = self.landmark_at(i, leg["direction"])
                if i == end or mark or i - begin >= size:
                    units.append((begin, i, leg["direction"], mark))
                    begin = i
            at = end
        return units

    def landmark_at(self, i: int, direction: str) -> str | None:
        """A landmark 1-2 cells straight out to the side of route cell i, if any."""
        for side in perpendicular(direction):
            for k in (1, 2):
                spot = step(self.route[i], side, k)
                name = next((n for n, c in sorted(self.landmarks.items()) if c == spot), None)
                if name:
                    return name
        return None

    def read_events(self, events: list[dict], me: str) -> None:
        self.limit = learned_limit(events, me, self.limit)
        for e in events:
            if e["kind"] == "message_rejected" and e["actor"] == me and self.sent:
                self.instructed, self.repaired, self.repairs = self.sent
                self.sent, self.waiting_since = None, None
            elif e["kind"] == "message" and e["actor"] == me:
                self.sent = None
            elif e["kind"] == "message" and e["actor"] != me:
                self.waiting_since, self.repaired = None, False

    def next_message(self, canvas: list[Cell] | None) -> str | None:
        """A repair when the visible canvas ends off the route, else the next instructions."""
        if canvas:
            tail = next((k for k, c in enumerate(reversed(canvas)) if c in self.index), len(canvas))
            if (
                tail
                and not self.repaired
                and self.repairs < MAX_REPAIRS
                and self.rng.random() < self.knob("repair", 0.6)
            ):
                return self.send(
                    self.index[canvas[-tail - 1]] if tail < len(canvas) else 0,
                    back=tail,
                    restart=tail == len(canvas),
                    repair=True,
                )
            if not tail and self.waiting_since is None:
                self.instructed = self.index[canvas[-1]]  # pace by what is drawn, not what was said
        if self.waiting_since is not None or self.instructed >= len(self.route) - 1:
            return None
        return self.send(self.instructed)

    def send(self, i: int, back: int = 0, restart: bool = False, repair: bool = False) -> str:
        prefix = (
            ("start over" if restart else f"no, go back {back}" if back else "")
            if self.limit is None
            else ("start over" if restart else f"back {back}" if back else "")
        )
        text, reached = self.compose(self.parts_from(i), prefix)
        self.sent = (self.instructed, self.repaired, self.repairs)
        self.instructed = reached if reached is not None else i
        self.repaired, self.repairs = self.repaired or repair, self.repairs + 1 if repair else 0
        return text

    def parts_from(self, i: int) -> list[tuple[int, str, int, str | None]]:
        """(end index, direction, cells, landmark) from route index i, up to `granularity` cells."""
        size, parts, total = max(int(self.knob("granularity", 16)), 1), [], 0
        for begin, end, direction, mark in self.units:
            if end <= i:
                continue
            n = end - max(begin, i)
            if parts and total + n > size:
                break
            parts.append((end, direction, n, mark))
            total += n
        return parts

    def compose(self, parts: list, prefix: str) -> tuple[str, int | None]:
        """Legs in order, each in the richest wording that still fits the word limit ("to the
        old mill", then "to old mill", then no landmark); a leg that fits in no wording waits
        for the next message. Returns the text and the route index it reaches."""
        joiner = ", then " if self.limit is None else " then "
        chosen: list[str] = [prefix] if prefix else []
        reached = None
        for end, direction, n, mark in parts:
            forms = [f"{direction} {n} to the {mark}", f"{direction} {n} to {mark}"] if mark else []
            form = next((f for f in [*forms, f"{direction} {n}"] if self.fits(chosen + [f], joiner)), None)
            if form is None:
                break
            chosen.append(form)
            reached = end
        if reached is None and parts and not prefix:  # nothing fits: send the barest form anyway
            chosen, reached = [f"{parts[0][1]} {parts[0][2]}"], parts[0][0]
        text = joiner.join(chosen)
        if self.fits(["go " + text], joiner) and not prefix:
            text = "go " + text
        return text or prefix, reached

    def fits(self, pieces: list[str], joiner: str) -> bool:
        return self.limit is None or len(joiner.join(pieces).split()) <= self.limit

    def beliefs(self) -> dict:
        """Progress as it knows it: the canvas when it can see it, else how far it has instructed."""
        canvas = next(iter(self.last_obs["state"].get("canvas_of", {}).values()), None)
        if not self.route:
            self.learn_map(self.last_obs["state"])
        if canvas is not None:
            on_route = set(self.route)
            progress, sure = sum(cell(c) in on_route for c in canvas) / len(self.route), 0.85
        else:
            progress, sure = self.instructed / max(len(self.route) - 1, 1), 0.6
        plan = (
            "I will correct the drawing where it leaves the route."
            if canvas is not None and self.repaired
            else "I will describe the next part of the route."
            if progress < 1
            else "I will wait for the finish."
        )
        return {
            "situation": "I am describing the route on my map so that my partner can draw it.",
            "partners": "My partner is drawing the route from my instructions.",
            "plan": plan,
            "fields": {"route_progress": round(min(progress, 1.0), 3)},
            "certainty": sure,
        }


# --- follower -------------------------------------------------------------------------------
class Follower(Policy):
    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.ops: deque = deque()
        self.undo_stack: list[tuple[str, Cell]] = []  # its accepted draws and erases, read from its events
        self.stack: list[tuple[str, Cell]] = []  # the same during a turn, with this turn's actions
        self.head: Cell | None = None
        self.last_direction: str | None = None
        self.owe_answer = False
        self.limit: int | None = None
        self.batch = int(self.knob("batch", 4))
        self.done_ops: list[tuple] = []  # the op behind each drawing action of its last turn

    def decide(self, obs: dict) -> list[dict]:
        state, me = obs["state"], obs["you"]
        self.start, self.grid = cell(state["start"]), (state["grid"]["width"], state["grid"]["height"])
        self.landmarks = {n: cell(c) for n, c in state["landmarks"].items()}
        self.read_events(obs["events"], me)
        self.canvas = [cell(c) for c in state["canvas"]]
        self.stack = list(self.undo_stack)
        if self.head not in self.canvas:
            self.head = self.canvas[-1] if self.canvas else None
        actions = self.work()
        if self.owe_answer and not self.ops:
            actions.append({"action": "message", "to": "all", "text": ACK if (self.limit or 3) >= 3 else "done"})
            self.owe_answer = False
        return actions or [{"action": "do_nothing"}]

    def beliefs(self) -> dict:
        """It cannot see the route, so it reports no progress; its certainty falls while it has
        instructions it has not carried out."""
        busy = bool(self.ops)
        return {
            "situation": "I am drawing the route my partner describes on a map that lacks it.",
            "partners": "My partner is telling me where the route goes, a few legs at a time.",
            "plan": "I will draw the cells I was told next." if busy else "I will wait for the next instruction.",
            "fields": {"route_progress": None},
            "certainty": 0.55 if busy else 0.7,
        }

    def read_events(self, events: list[dict], me: str) -> None:
        self.limit = learned_limit(events, me, self.limit)
        for e in events:
            if e["kind"] == "action" and e["actor"] == me:
                self.remember(e["action"], e.get("args", {}))
            elif e["kind"] == "invalid_action" and e["actor"] == me:
                m = TURN_LIMIT.search(str(e.get("reason", "")))
                if m and int(m.group(1)) < self.batch:  # refused past the limit: do those again
                    self.batch = int(m.group(1))
                    self.ops.extendleft(reversed(self.done_ops[self.batch :]))
            elif e["kind"] == "message_rejected" and e["actor"] == me:
                self.owe_answer = True
            elif e["kind"] == "message" and e["actor"] != me:
                self.hear(str(e.get("text", "")))

    def remember(self, action: str, args: dict) -> None:
        if action in ("draw", "erase"):
            self.undo_stack.append((action, (args["x"], args["y"])))
        elif action == "undo" and self.undo_stack:
            self.undo_stack.pop()
        elif action == "reset":
            self.undo_stack.clear()

    def hear(self, text: str) -> None:
        """Queue the moves of an instruction; a correction replaces the plan if acted on."""
        self.owe_answer = True
        low = text.lower()
        moves = [
            ("go", ALIASES.get(d, d), int(n), self.named(clause))
            for clause in re.split(r",|\bthen\b", low)
            for d, n in MOVE.findall(clause)
        ]
        back = BACK.search(low)
        if back or "start over" in low:
            if self.rng.random() >= self.knob("check", 0.8):
                return  # it does not act on the correction
            self.ops.clear()
            self.ops.append(("reset",) if "start over" in low else ("back", int(back.group(1))))
        self.ops.extend(moves)

    def named(self, clause: str) -> str | None:
        known = [n for n in self.landmarks if n in clause]
        return max(known, key=len) if known else None

    # --- drawing ------------------------------------------------------------------------------
    def work(self) -> list[dict]:
        actions: list[dict] = []
        self.done_ops = []
        while self.ops and len(actions) < self.batch:
            op = self.ops.popleft()
            action = getattr(self, f"op_{op[0]}")(*op[1:])
            if action:
                actions.append(action)
                self.done_ops.append(op)
        return actions

    def op_go(self, direction: str, n: int, mark: str | None) -> None:
        """Plan the cells of one move, perhaps mis-drawn, then a look at the named landmark."""
        origin = self.head or self.start
        cells = self.plan(origin, direction, n)
        if not self.canvas:
            cells.insert(0, self.start)
        self.last_direction = direction
        drawn: list[Cell] = []  # the cells this move adds (shared with its look)
        self.ops.extendleft(reversed([("cell", c, drawn) for c in cells] + [("look", origin, direction, mark, drawn)]))

    def plan(self, origin: Cell, direction: str, n: int) -> list[Cell]:
        kind = None
        if self.rng.random() < 1 - (1 - self.knob("slip", 0.03)) ** n:
            kind = self.rng.choice(("over", "under", "jog", "turn"))
        if kind == "turn" and self.last_direction in (None, direction, opposite(direction)):
            kind = "jog"
        if kind == "under" and n == 1:
            kind = "over"
        go = opposite(direction) if kind == "turn" else direction
        count = n + (kind == "over") - (kind == "under")
        jog_at = self.rng.randrange(count) if kind == "jog" else -1
        side = self.rng.choice(perpendicular(direction))
        cells, at = [], origin
        for i in range(count):
            if i == jog_at:
                at = step(at, side)
                cells.append(at)
            at = step(at, go)
            cells.append(at)
        return cells

    def op_cell(self, c: Cell, drawn: list[Cell]) -> dict | None:
        if c in self.canvas:
            self.head = c  # already drawn: the pen passes over it
            return None
        if not (0 <= c[0] < self.grid[0] and 0 <= c[1] < self.grid[1]):
            while self.ops and self.ops[0][0] == "cell":  # the edge of the map ends this move
                self.ops.popleft()
            return None
        self.canvas.append(c)
        self.stack.append(("draw", c))
        self.head = c
        drawn.append(c)
        return {"action": "draw", "x": c[0], "y": c[1]}

    def op_look(self, origin: Cell, direction: str, mark: str | None, drawn: list[Cell]) -> None:
        """A landmark named for a move sits beside its last cell: if the pen stopped elsewhere,
        redraw the move straight from its origin to the cell level with the landmark."""
        if mark not in self.landmarks:
            return
        spot, (dx, dy) = self.landmarks[mark], DIRECTIONS[direction]
        reach = (spot[0] - origin[0]) * dx + (spot[1] - origin[1]) * dy
        if reach <= 0:
            return
        target = [step(origin, direction, i) for i in range(1, reach + 1)]
        if self.head == target[-1] or self.rng.random() >= self.knob("check", 0.8):
            return
        wrong = [c for c in reversed(drawn) if c in self.canvas and c not in target and c != self.start]
        again: list[Cell] = []
        self.ops.extendleft(reversed([("remove", c) for c in wrong] + [("cell", c, again) for c in target]))
        self.head = origin

    def op_back(self, n: int) -> None:
        self.ops.extendleft(reversed([("remove", c) for c in reversed(self.canvas[-n:])]))

    def op_remove(self, c: Cell) -> dict | None:
        if c not in self.canvas:
            return None
        self.canvas.remove(c)
        self.head = self.canvas[-1] if self.canvas else None
        if self.stack and self.stack[-1] == ("draw", c):
            self.stack.pop()
            return {"action": "undo"}
        self.stack.append(("erase", c))
        return {"action": "erase", "x": c[0], "y": c[1]}

    def op_reset(self) -> dict | None:
        if not self.canvas:
            return None
        self.canvas, self.head = [], None
        self.stack.clear()
        return {"action": "reset"}


def make_policy(name: str, role: str, knobs: dict, seed: int) -> Policy:
    """The guide or follower behaviour, by role (`make_scripted` calls POLICY like a class)."""
    return (Guide if role == "guide" else Follower)(name, role, knobs, seed)


POLICY = make_policy
