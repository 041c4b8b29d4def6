"""The offline judge: VERA's default, embedded, dependency-free judge."""

from vera.judges.offline.judge import OfflineJudge

__all__ = ["OfflineJudge"]
