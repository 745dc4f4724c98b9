"""Fixtures and conformance suites that plugin packages reuse in their own tests."""
