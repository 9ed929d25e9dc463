"""Prompt rendering. Every prompt is a file (project wording, following the structure of the
paper's Appendix A); this module only fills them in. The generic files are under the workflow's
prompts folder (config/prompts/: the agent's templates, the customer's behaviour, the conduct
blocks, the judge); what a domain says about its own service (the all-roles text and its rules,
each desk's role and rules, which tasks get a request block) is under the domain's prompts
folder (config/domains/<name>/prompts/, `DOMAIN_FILES`).

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

from incognita.common.io import InputError

BLOCKS = "customer/request_blocks.yaml"  # which tasks get a request block, and which requests
ROLE_ALL, RULES_ALL = "service/role_all.md", "service/rules_all.md"  # the all-roles text (Vega's, the direct agent's)
DESKS = "service/desks/"  # one file per holder of some tools: its role and rules
DOMAIN_FILES = (BLOCKS, ROLE_ALL, RULES_ALL)  # with every file under DESKS: the domain's own


@dataclass(frozen=True)
class PromptSet:
    """The prompt files of one domain's episodes: the generic folder (`root`), the domain's own
    (`domain_root`), and the domain's holder maps (`partition`: the names an arm shows holders by)."""

    root: Path
    domain_root: Path
    partition: object  # incognita.access.reference.partition.Partition
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

    def path(self, rel: str) -> Path:
        """Where a prompt file is: the domain's folder for what a domain says, else the generic one."""
        return (self.domain_root if rel in DOMAIN_FILES or rel.startswith(DESKS) else self.root) / rel

    def read(self, rel: str) -> str:
        """A prompt file's text, read from disk once per PromptSet (episodes ask many times)."""
        if rel not in self._cache:
            path = self.path(rel)
            try:
                self._cache[rel] = path.read_text(encoding="utf-8").strip()
            except FileNotFoundError:
                raise InputError(f"{path}: prompt file not found") from None
        return self._cache[rel]

    def files_for(self, arm, partition) -> list[Path]:
        """The prompt files the cells of `arm` (an arm_registry.Arm, bound to `partition`) depend
        on: a workflow input, so editing one re-runs those cells."""
        rel = ["agent/preamble.md", "customer/behaviour.md", "customer/requests.md", BLOCKS, arm.agent_prompt]
        if arm.agent_executes:  # the agent is the service: its template carries the all-roles text
            rel += [ROLE_ALL, RULES_ALL]
        else:
            rel += [arm.service_prompt, arm.conduct_prompt]
            for holder, tools in arm.owners(partition).items():
                holds_all = set(partition.tools) <= tools
                rel += [ROLE_ALL, RULES_ALL] if holds_all else [self._desk_file(arm.prompt_name(holder, partition))]
        return [self.path(r) for r in dict.fromkeys(rel)]

    def agent(self, arm, recipients: list[str]) -> str:
        """The evaluated agent's prompt: the arm's template, filled in. A template takes what it
        names: {preamble}, the all-roles text ({service_role}, {service_rules}; where the agent is
        the service), the recipients ({recipients}, {recipient_choices}) and, in an arm that
        declares several holders, {capability_map}: each holder with its role text."""
        template = self.read(arm.agent_prompt)
        holders = [r for r in recipients if r != "USER"]
        declares_map = arm.declared and len(holders) > 1  # one holder: declared by being the only one
        if declares_map != ("{capability_map}" in template):
            raise InputError(
                f"{arm.source}: arms.{arm.name}.prompts.agent: {self.path(arm.agent_prompt)} "
                + (
                    "must carry {capability_map}: the arm declares several holders"
                    if declares_map
                    else "carries {capability_map}, which only an arm declaring several holders fills"
                )
            )
        return template.format(
            preamble=self.read("agent/preamble.md"),
            service_role=self.read(ROLE_ALL),
            service_rules=self.read(RULES_ALL),
            recipients=", ".join(recipients),
            recipient_choices=" | ".join(recipients),
            capability_map=self.capability_map(arm, holders) if declares_map else "",
        )

    def capability_map(self, arm, holders: list[str]) -> str:
        """One line per holder with the role text it was given, word for word (never its tools'
        names): what an arm that declares its holders tells the agent, and a referring desk."""
        return "\n".join(f"- {h}: {' '.join(self.holder_parts(h, False, arm)['role'].split())}" for h in holders)

    @staticmethod
    def _desk_file(holder: str) -> str:
        return f"{DESKS}{holder.lower()}.md"

    def holder_parts(self, holder: str, holds_all: bool, arm=None) -> dict:
        """A holder's role and rules: a holder of every tool speaks from the all-roles text
        (Vega's), a holder of some from its own file's front matter (a desk's; under an arm that
        renames its holders, the file of the name in the partition)."""
        if holds_all:
            return {"role": self.read(ROLE_ALL), "rules": self.read(RULES_ALL)}
        rel = self._desk_file(arm.prompt_name(holder, self.partition) if arm is not None else holder)
        text = self.read(rel)
        try:
            _, front, _ = text.split("---", 2)
            meta = yaml.safe_load(front)
            return {"role": meta["role"].strip(), "rules": (meta.get("rules") or "").strip()}
        except (ValueError, KeyError, TypeError, yaml.YAMLError) as exc:
            raise InputError(f"{self.path(rel)}: expected YAML front matter with 'role' and 'rules' ({exc})") from None

    def service(self, arm, holder: str, holds_all: bool, holders: list[str] = ()) -> str:
        """A holder's prompt: the arm's service template with the holder's role, the arm's
        conduct block and its rules ({service_rules} as they are, {desk_rules} in an
        <operating_rules> block when there are any). In an arm whose holders refer, the conduct
        block's {directory} lists the other `holders` with their role texts."""
        parts = self.holder_parts(holder, holds_all, arm)
        rules = f"\n<operating_rules>\n{parts['rules']}\n</operating_rules>" if parts["rules"] else ""
        conduct = self.read(arm.conduct_prompt)
        if arm.referral != ("{directory}" in conduct):
            raise InputError(
                f"{arm.source}: arms.{arm.name}.prompts.conduct: {self.path(arm.conduct_prompt)} "
                + (
                    "must carry {directory}: the arm's holders refer"
                    if arm.referral
                    else "carries {directory}, which only an arm whose holders refer fills"
                )
            )
        if arm.referral:
            conduct = conduct.format(directory=self.capability_map(arm, [h for h in holders if h != holder]))
        return (
            self.read(arm.service_prompt)
            .format(
                service_role=parts["role"],
                desk_role=parts["role"],
                conduct=conduct,
                service_rules=parts["rules"],
                desk_rules=rules,
            )
            .strip()
        )

    def request_block(self, card: dict) -> list[dict]:
        """The card requests that form the task's request block (Appendix A.2; BLOCKS)."""
        if BLOCKS + ":parsed" not in self._cache:  # parsed once: the customer's prompt is built every step
            self._cache[BLOCKS + ":parsed"] = yaml.safe_load(self.read(BLOCKS)) or {}
        blocks = self._cache[BLOCKS + ":parsed"]
        chosen = blocks.get(str(card["task_id"]), [])
        requests = card.get("requests", [])
        bad = [i for i in chosen if not (isinstance(i, int) and 0 <= i < len(requests))]
        if bad:
            raise InputError(
                f"{self.path(BLOCKS)}: task {card['task_id']}: request index(es) {bad} not among "
                f"the card's {len(requests)} request(s)"
            )
        return [requests[i] for i in chosen]

    def customer(self, card: dict, memory: dict[str, str], tokens: list[str]) -> str:
        """The customer's prompt (Appendix A.2): the shared behaviour block, identical in every
        trial; the task's request block, only for the tasks A.2 gives one; and the <memory> of
        what the disclosure gate has released. Identical across arms, models and repetitions
        for a given memory state. The upstream persona text is left out: parts of it contradict
        the shared rules (inventing reasons, chatting on). The releasable fields are named by
        the `release_field` tool's schema, not in the prompt (`tokens` is unused here)."""
        parts = [self.read("customer/behaviour.md")]
        lines = []
        for req in self.request_block(card):
            lines.append(f"- {mask(req['demand'], card)}")
            lines.extend(f"  - {mask(fb, card)}" for fb in req.get("fallbacks", []))
        if lines:
            parts.append(self.read("customer/requests.md").format(request_lines="\n".join(lines)))
        known = [f"- {token}: {value}" for token, value in memory.items()]
        known += [f"- {fact}" for fact in card.get("not_known", [])]
        parts.append("<memory>\n" + ("\n".join(known) if known else "(nothing released yet)") + "\n</memory>")
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
