"""Errors the engine raises; messages are written for a person to act on."""


class EngineError(Exception):
    """Base class of every error the engine raises."""


class AllocationError(EngineError):
    """A request cannot be satisfied on the given topology (kubelet would refuse it)."""


class SMTAlignmentError(AllocationError):
    """full-pcpus-only: the request is not a whole number of physical cores."""
