"""Prompt files under ``prompts/``: a ``=== system`` part and a ``=== user`` part.

Placeholders are ``{{name}}``. Each file puts its fixed instructions first and the
per-call material last, so that servers with prefix caching (llama.cpp, vLLM) reuse the prefix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

PROMPT_DIR = Path(__file__).resolve().parents[1] / "prompts"
_SECTION = re.compile(r"^=== (system|user)\s*$", re.M)
_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")


@dataclass(frozen=True)
class Prompt:
    name: str
    system: str
    user: str

    def placeholders(self) -> set[str]:
        return set(_PLACEHOLDER.findall(self.system + self.user))

    def messages(self, **values: object) -> list[dict[str, str]]:
        missing = self.placeholders() - values.keys()
        if missing:
            raise KeyError(f"prompt {self.name}: no value for {', '.join(sorted(missing))}")

        def fill(text: str) -> str:
            return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), text)

        return [{"role": "system", "content": fill(self.system)}, {"role": "user", "content": fill(self.user)}]


@lru_cache(maxsize=None)
def load_prompt(name: str, folder: str | None = None) -> Prompt:
    text = (Path(folder) if folder else PROMPT_DIR).joinpath(f"{name}.md").read_text(encoding="utf-8")
    parts = _SECTION.split(text)
    sections = dict(zip(parts[1::2], (p.strip() for p in parts[2::2])))
    if set(sections) != {"system", "user"}:
        raise ValueError(f"prompt {name}: needs a '=== system' and a '=== user' section")
    return Prompt(name, sections["system"], sections["user"])
