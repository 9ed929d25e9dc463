"""Per-run metrics from a run's events alone: the task's own and the communication counts."""

from __future__ import annotations

from incognita.collabsim.world.task import task_class


def communication_metrics(events: list[dict]) -> dict[str, float]:
    messages = [e for e in events if e["kind"] == "message"]
    words = [e["payload"]["words"] for e in messages]
    return {
        "messages": float(len(messages)),
        "rejected_messages": float(sum(e["kind"] == "message_rejected" for e in events)),
        "invalid_actions": float(sum(e["kind"] == "invalid_action" for e in events)),
        "average_message_words": sum(words) / len(words) if words else float("nan"),
    }


def run_metrics(events: list[dict]) -> dict[str, float]:
    task = events[0]["payload"]["task"]
    return {**task_class(task).metrics(events), **communication_metrics(events)}
