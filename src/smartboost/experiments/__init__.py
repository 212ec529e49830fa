"""Reproductions of the figures and tables of the papers smartboost implements."""
