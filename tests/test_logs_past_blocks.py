"""A paste that keeps an old, solved error under a header of its own: the old error is
history, the current one is the report; a new paragraph ends the old block."""

from __future__ import annotations

from assistant.logs import classify_text

TAIL = "GPU 0 has a total capacity of 79.19 GiB of which 1.10 GiB is free."
OLD_OOM = f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.50 GiB. {TAIL}"
NEW_OOM = f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 6.00 GiB. {TAIL}"


def test_an_old_error_under_a_past_header_is_not_the_failure() -> None:
    text = f"### Previous error (fixed)\n{OLD_OOM}\n\n### Current error\nKeyError: 'reward'\n"
    report = classify_text(text)
    assert report.oom is False
    assert report.first_error is not None and "KeyError" in report.first_error.text


def test_a_new_paragraph_after_the_old_block_can_hold_todays_oom() -> None:
    """No 'current error' header: the old block still ends at its first empty line."""
    again = "After lowering the micro-batch it fails again at step 9:"
    text = f"Previous error:\n{OLD_OOM}\n\n{again}\n{NEW_OOM}\n"
    report = classify_text(text)
    assert report.oom is True
    assert (
        report.evidence[0].text.startswith("torch.OutOfMemoryError")
        and "6.00 GiB" in report.evidence[0].text
    )


def test_without_a_past_header_both_errors_count() -> None:
    report = classify_text(f"{OLD_OOM}\n\n{NEW_OOM}\n")
    assert report.oom is True
    assert "3.50 GiB" in report.evidence[0].text  # the earlier one is the root
