"""Who acts this tick and in what order; then the opening is made durable."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.context import TickContext
from engine.pipeline import BasePhase

if TYPE_CHECKING:
    from engine.phase_host import PhaseHost


class SchedulePhase(BasePhase):
    """Awake agents not carried by a journey act; nearby ones are clustered to act in turn."""

    name = "schedule"

    def __init__(self, engine: PhaseHost) -> None:
        self.engine = engine

    async def _execute(self, ctx: TickContext) -> TickContext:
        acting = {
            a.name: a.position
            for a in self.engine.sim.agents.get_all_agents()
            if not a.is_sleeping and a.journey is None
        }
        talk = self.engine.sim.conversations
        ties = [c.participants for c in talk.active_conversations()]
        ties += [(i.inviter, i.invitee) for i in talk.pending_invitations()]
        clusters = self.engine.scheduler.compute_clusters(acting, ties)
        order = [name for cluster in clusters for name in cluster]
        return ctx.with_agents_to_act(order).with_clusters(clusters)


class CheckpointPhase(BasePhase):
    """Commit the opening (expiry, wake, weather, movement) with the schedule, atomically.

    From here a crash resumes this tick at its turns: the opening is not run twice,
    and the stored schedule gives the same agents the same order.

    When every mind scheduled answers at once, no turn can commit before the tick's
    last commit, so the opening is held and written with the turns instead
    (`TurnCommitter.hold_opening`): one transaction a tick rather than two.
    """

    name = "checkpoint"
    critical = True

    def __init__(self, engine: PhaseHost) -> None:
        self.engine = engine

    async def _execute(self, ctx: TickContext) -> TickContext:
        committer = self.engine.committer
        names = [n for cluster in ctx.clusters for n in cluster]
        if self.engine.all_answer_at_once(names):
            committer.hold_opening(ctx.tick, ctx.events, ctx.clusters)
        else:
            await committer.commit_opening(ctx.tick, ctx.events, ctx.clusters)
        return ctx
