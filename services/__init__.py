"""Stateful world logic over storage and config: world creation and status today;
the world, agent, action, crafting and conversation services arrive with issue 4.
"""
