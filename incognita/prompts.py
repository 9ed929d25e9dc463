"""Prompt rendering. Every prompt is a file under config/prompts/ (project wording,
following the structure of the paper's Appendix A); this module only fills them in.

The agent's prompt carries the participant list, a neutral objective and the output
format, plus (direct arm only) the service role and rules, because there the agent is the
service. A desk's prompt is its role, the shared conduct block, then its own rules. The
customer's prompt is the shared behaviour block, the task's request block, and a
<memory> that holds only what the disclosure gate has released so far.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from incognita.io import InputError

SOCIAL_DESKS = ("Aster", "Boreal", "Cygnus", "Dorian", "Elara", "Fenn")


@dataclass(frozen=True)
class PromptSet:
    root: Path
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

    def read(self, rel: str) -> str:
        """A prompt file's text, read from disk once per PromptSet (episodes ask many times)."""
        if rel not in self._cache:
            path = self.root / rel
            try:
                self._cache[rel] = path.read_text(encoding="utf-8").strip()
            except FileNotFoundError:
                raise InputError(f"{path}: prompt file not found") from None
        return self._cache[rel]

    def files_for(self, arm: str) -> list[Path]:
        """The prompt files an arm's cells depend on (a workflow input: editing one re-runs those cells)."""
        common = ["agent/preamble.md", "customer/behaviour.md", "customer/requests.md"]
        per_arm = {
            "direct": ["agent/direct.md", "service/role_all.md", "service/rules_all.md"],
            "indirect": ["agent/mediated.md", "service/vega.md", "service/conduct.md", "service/role_all.md",
                         "service/rules_all.md"],
            "social": ["agent/mediated.md", "service/desk.md", "service/conduct.md"]
                      + [f"service/desks/{d.lower()}.md" for d in SOCIAL_DESKS],
        }
        return [self.root / rel for rel in common + per_arm[arm]]

    def agent(self, arm: str, recipients: list[str]) -> str:
        preamble = self.read("agent/preamble.md")
        if arm == "direct":
            return self.read("agent/direct.md").format(
                preamble=preamble, service_role=self.read("service/role_all.md"),
                service_rules=self.read("service/rules_all.md"))
        return self.read("agent/mediated.md").format(
            preamble=preamble, recipients=", ".join(recipients), recipient_choices=" | ".join(recipients))

    def vega(self) -> str:
        return self.read("service/vega.md").format(
            service_role=self.read("service/role_all.md"), conduct=self.read("service/conduct.md"),
            service_rules=self.read("service/rules_all.md"))

    def desk_parts(self, desk: str) -> dict:
        rel = f"service/desks/{desk.lower()}.md"
        text = self.read(rel)
        try:
            _, front, _ = text.split("---", 2)
            meta = yaml.safe_load(front)
            return {"role": meta["role"].strip(), "rules": (meta.get("rules") or "").strip()}
        except (ValueError, KeyError, TypeError, yaml.YAMLError) as exc:
            raise InputError(f"{self.root / rel}: expected YAML front matter with 'role' and 'rules' ({exc})") from None

    def desk(self, desk: str) -> str:
        parts = self.desk_parts(desk)
        rules = f"\n<operating_rules>\n{parts['rules']}\n</operating_rules>" if parts["rules"] else ""
        return self.read("service/desk.md").format(
            desk_role=parts["role"], conduct=self.read("service/conduct.md"), desk_rules=rules).strip()

    def customer(self, card: dict, memory: dict[str, str], tokens: list[str]) -> str:
        """The customer's prompt, identical across arms, models and repetitions for a given
        memory state: the request block comes from the card, values masked as <token>."""
        parts = [self.read("customer/behaviour.md")]
        if card.get("persona"):
            parts.append(f"<manner>\n{card['persona']}\n</manner>")
        lines = []
        for req in card.get("requests", []):
            lines.append(f"- {mask(req['demand'], card)}")
            lines.extend(f"  - {mask(fb, card)}" for fb in req.get("fallbacks", []))
        if lines:
            parts.append(self.read("customer/requests.md").format(request_lines="\n".join(lines)))
        known = [f"- {token}: {value}" for token, value in memory.items()]
        known += [f"- {fact}" for fact in card.get("not_known", [])]
        parts.append("<memory>\n" + ("\n".join(known) if known else "(nothing released yet)") + "\n</memory>")
        parts.append("Details you can release when asked: " + ", ".join(tokens))
        return "\n\n".join(parts)


def mask(text: str, card: dict) -> str:
    """Replace every card field value in `text` by <token>: demands never leak gated values."""
    for fld in sorted(card["fields"], key=lambda f: -len(f["value"])):
        for span in sorted(set(fld["spans"] + [fld["value"]]), key=len, reverse=True):
            if len(span) >= 2:
                text = _replace_ci(text, span, f"<{fld['token']}>")
    return text


def _replace_ci(text: str, old: str, new: str) -> str:
    import re

    # Word-bounded, swallowing a plural ending so "headphone" masks "headphones" whole.
    pattern = r"(?<![A-Za-z0-9])" + re.escape(old) + r"(?:e?s)?(?![A-Za-z0-9])"
    return re.sub(pattern, lambda _m: new, text, flags=re.IGNORECASE)

