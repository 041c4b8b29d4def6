"""The `per_claim` mode (seed 000): one extraction call, then one verification call per claim
(1 + N calls per sample), each asked as the batched mode asks a batch of one."""

from __future__ import annotations

from typing import ClassVar

from vera.judges._mode_batched import BatchedMode
from vera.judges._modes import JointTurns, Mode


class PerClaimMode(BatchedMode):
    """The batched mode's two steps, one claim per verification call."""

    mode: ClassVar[Mode] = "per_claim"
    claims_per_call: ClassVar[int | None] = 1
    joint_turns: ClassVar[JointTurns | None] = None
