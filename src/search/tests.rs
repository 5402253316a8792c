//! Unit tests for the search index.
