"""Adapters that run third-party RoPE code as implementations under test."""
