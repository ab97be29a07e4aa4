"""The ends of the reaction-time search of the α fit (:func:`.alpha_fit.fit_alpha`): t_d is searched from 0 to the
lag estimate + ``search_delay`` samples; when the residual is lowest at an end and still falls one sample past it, the
true t_d lies outside. Below 0 the position moves before its goal, which no servo does: the goals are timed late
(unstamped goals timed by their receive time over a slow link, a recorder on another machine) and any α̂ fitted on
them is wrong, so the fit is refused (a warning would leave exit 0 and an α file written: a batch or the one-shot
replay node would use it). Past the upper end a longer t_d is physical (a slow servo, goals stamped early): the
search follows it, said, up to :data:`MAX_REACTION`."""

from __future__ import annotations

import logging
from collections.abc import Callable

from ..errors import ServoFFError

_log = logging.getLogger(__name__)
#: [s] farthest the reaction-time search follows a residual still falling past its range (either way)
MAX_REACTION = 0.25


class ReactionTimeError(ServoFFError, ValueError):
    """The reaction time t_d lies outside what a servo does: the motion leads its goals (goals timed late), or lags
    them by more than :data:`MAX_REACTION`."""


def _walk(coarse: Callable[[int], float | None], d: int, step: int, stop: int) -> int:
    """The delay from ``d`` in steps of ``step`` (±1) up to ``stop`` where the residual ``coarse`` stops falling."""
    c = coarse(d)
    while d != stop and c is not None:
        nxt = coarse(d + step)
        if nxt is None or not nxt < c:
            break
        d, c = d + step, nxt
    return d


def past_bounds(coarse: Callable[[int], float | None], d: int, lo: int, hi: int, dt: float) -> tuple[int, str]:
    """(t_d [samples], a note) once the residual is followed past the searched ``lo`` … ``hi`` when ``d`` is at an end
    and it still falls beyond: below ``lo`` (= 0) the position moves before its goal — no servo does — and the fit
    is refused (before: t_d pinned at 0, unsaid: goals received 30 ms late gave rms 3.7×, α̂1 −28 %, exit 0); past
    ``hi`` the search goes on, noted, to :data:`MAX_REACTION`."""
    stop = max(hi, int(round(MAX_REACTION / dt)))
    if d == lo:
        lead = -_walk(coarse, d, -1, -stop)
        if lead > 0:
            raise ReactionTimeError(
                f"the motion leads its goals by {lead * dt * 1e3:.3g} ms (the residual is lowest with each goal paired "
                f"with the position {lead * dt * 1e3:.3g} ms before it; a servo reacts after its goal): the goals are "
                "timed late (unstamped goals, e.g. Float64MultiArray, timed by their receive time over a slow link? "
                "record stamped goals or on the robot), or the model misfits this log (a bench log recorded on the "
                "robot: its fit's rms tells); not fitted (--delay SECONDS fits at a reaction time you know)"
            )
    if d == hi:
        top = _walk(coarse, d, 1, stop)
        if top == stop > hi:
            raise ReactionTimeError(
                f"the reaction time t_d is past {top * dt * 1e3:.4g} ms, the residual still falling: no servo lags its "
                "goals this long (goals stamped early?); give it (servo-ff fit --delay) if it is; not fitted"
            )
        if top > hi:
            note = (
                f"t_d {top * dt * 1e3:.4g} ms is past the searched 0-{hi * dt * 1e3:.4g} ms (the lag estimate + "
                "search_delay): searched on (goals stamped early, or a slow servo?)"
            )
            _log.warning(note)
            return top, note
    return d, ""


__all__ = ["MAX_REACTION", "ReactionTimeError", "past_bounds"]
