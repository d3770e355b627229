"""Which pods hold what they request: the phase rules every reader of pods shares.

A finished pod (Succeeded, Failed) holds nothing. A pod the kubelet refused at admission
is Failed too, and never started; it is still mirrored, because it is what a diagnosis
explains (`status.reason`: the Topology Manager's, a device plugin's or CPU/memory
manager's refusal, and the resource-fit ones `OutOfcpu`, `OutOfmemory`,
`OutOf<extended resource>`).
"""

from __future__ import annotations

FINISHED_PHASES = frozenset({"Succeeded", "Failed"})
ADMISSION_REJECTIONS = frozenset({"TopologyAffinityError", "UnexpectedAdmissionError"})
OUT_OF_RESOURCE = "OutOf"


def rejected_at_admission(phase: str, reason: str) -> bool:
    """Refused by the kubelet at admission: mirrored, holding nothing."""
    return phase == "Failed" and (
        reason in ADMISSION_REJECTIONS or reason.startswith(OUT_OF_RESOURCE)
    )
