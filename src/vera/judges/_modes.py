"""How each mode of `LLMJudge` extracts and verifies: one `ModeStrategy` per mode, which the
judge picks by its `Mode` (`vera.judges._llm`): `vera.judges._mode_batched`, on whose two
steps (extract, then verify) the others build, `_mode_per_claim`, `_mode_truths` and
`_mode_single_call`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import ClassVar, Literal, get_args

from vera._types import Claim, ClaimVerdict
from vera.judges._asking import Asker

Mode = Literal["batched", "per_claim", "truths", "single_call"]
MODES: tuple[str, ...] = get_args(Mode)

JointTurns = Literal["verify", "answer"]
"""How a mode judges the turns of one conversation together (`vera.judges._turn_judge`):
their claims verified in one call, or their claims and verdicts answered in one call."""


class ModeStrategy(Asker, ABC):
    """One mode's way to a sample's claims and verdicts, asking with the judge's settings."""

    mode: ClassVar[Mode]
    prompt_names: ClassVar[tuple[str, ...]]
    """The prompts the mode uses, in the order `prompt_versions` lists them."""
    claims_per_call: ClassVar[int | None] = None
    """Claims verified in one call where the mode fixes it; else the judge's setting."""
    joint_turns: ClassVar[JointTurns | None] = None
    """How the turns of one conversation are judged together; None: each on its own."""
    quoted_asked = False
    """Whether the quoted verification prompt was used (see `prompt_versions`)."""

    @abstractmethod
    async def analyse(
        self, response: str, contexts: Sequence[str], *, query: str | None = None
    ) -> tuple[list[Claim], list[ClaimVerdict]]:
        """Claims of `response` and their verdicts against `contexts`."""

    @abstractmethod
    async def extract_claims(self, response: str, *, query: str | None = None) -> list[Claim]:
        """Numbered atomic claims, each located in the response where it appears verbatim."""

    @abstractmethod
    async def verify_claims(
        self, claims: Sequence[Claim], contexts: Sequence[str]
    ) -> list[ClaimVerdict]:
        """One verdict per claim (the majority over the judge's draws)."""
