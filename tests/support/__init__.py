"""Test support: the real-backend harness, seeding, fault proxy and fakes the suite shares."""
