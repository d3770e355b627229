"""A session's full lists pause the garbage collector and shorten the GIL's switch
interval, and put both back however the lists end."""

import gc
import sys

import pytest

from topology.sync.interpreter import (
    LIST_SWITCH_INTERVAL,
    cyclic_gc_paused,
    thread_switch_interval,
    tuned_for_full_lists,
)


@pytest.fixture
def process_settings():
    enabled, interval = gc.isenabled(), sys.getswitchinterval()
    yield
    sys.setswitchinterval(interval)
    (gc.enable if enabled else gc.disable)()


def test_lists_run_without_the_collector_and_with_short_switches(process_settings):
    gc.enable()
    sys.setswitchinterval(0.005)
    with tuned_for_full_lists():
        assert not gc.isenabled()
        assert sys.getswitchinterval() == pytest.approx(LIST_SWITCH_INTERVAL)
    assert gc.isenabled()
    assert sys.getswitchinterval() == pytest.approx(0.005)


def test_both_come_back_when_a_list_fails(process_settings):
    gc.enable()
    sys.setswitchinterval(0.005)
    with pytest.raises(RuntimeError), tuned_for_full_lists():
        raise RuntimeError("the database went away")
    assert gc.isenabled()
    assert sys.getswitchinterval() == pytest.approx(0.005)


def test_a_collector_the_process_had_turned_off_stays_off(process_settings):
    gc.disable()
    with cyclic_gc_paused():
        pass
    assert not gc.isenabled()


def test_a_process_with_a_shorter_interval_keeps_it(process_settings):
    sys.setswitchinterval(0.0002)
    kept = sys.getswitchinterval()  # held in whole microseconds
    with thread_switch_interval(0.001):
        assert sys.getswitchinterval() == kept
    assert sys.getswitchinterval() == kept
