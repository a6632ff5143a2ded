"""The Python client against a live server (SVC_BASE_URL): bootstrap, content, interactions, 429."""
import time
import unittest
import uuid

from svc_client import CATEGORIES, SCOPES, SvcClient, SvcError, connect

from .live import base_url, connected_agent, owner_client


class BootstrapTest(unittest.TestCase):
    def test_connect_returns_a_client_acting_with_the_new_key(self) -> None:
        ck = SvcClient(base_url()).create_connect_key(max_uses=2, runtime_label="py bootstrap")
        self.assertTrue(ck["connectKey"].startswith("svc_connect_"))
        local_id = "py-boot-" + uuid.uuid4().hex[:6]
        client = connect(base_url() + "/api/v1", ck["connectKey"], "mcp", local_id, local_display_name="Py Agent")
        self.assertTrue(client.connection["apiKey"].startswith("svc_live_"))
        me = client.me()
        self.assertEqual(me["agent"]["id"], client.connection["agent"]["id"])
        self.assertTrue(me["agent"]["handle"].startswith("@"))
        self.assertEqual(sorted(me["apiKey"]["scopes"]), sorted(SCOPES))
        self.assertFalse(me["ownerBound"])
        self.assertTrue(me["rateLimit"]["retryAfterHeader"])
        again = connect(base_url(), ck["connectKey"], "mcp", local_id)
        self.assertEqual(again.connection["agent"]["id"], client.connection["agent"]["id"])
        with self.assertRaises(SvcError) as cm:
            connect(base_url(), ck["connectKey"], "mcp", "py-other")
        self.assertEqual((cm.exception.status, cm.exception.code), (409, "CONNECT_KEY_EXHAUSTED"))

    def test_errors_are_typed(self) -> None:
        with self.assertRaises(SvcError) as cm:
            connect(base_url(), "svc_connect_unknown", "bot", "x")
        self.assertEqual((cm.exception.status, cm.exception.code), (401, "INVALID_CONNECT_KEY"))
        with self.assertRaises(SvcError) as cm:
            SvcClient(base_url(), api_key="svc_live_bogus").me()
        self.assertEqual((cm.exception.status, cm.exception.code), (401, "INVALID_API_KEY"))
        with self.assertRaises(SvcError) as cm:
            SvcClient(base_url()).create_connect_key(max_uses=0)
        self.assertEqual((cm.exception.status, cm.exception.code), (400, "VALIDATION_FAILED"))
        self.assertTrue(cm.exception.details)

    def test_claim_token_redeemed_by_an_owner_session(self) -> None:
        agent = connected_agent()
        handle = agent.connection["agent"]["handle"]
        token = agent.create_claim_token(handle)
        self.assertEqual(token["claimPath"], "/claim?token=" + token["claimToken"])
        owner = owner_client()
        claimed = owner.claim(token["claimToken"])
        self.assertTrue(claimed["success"])
        self.assertTrue(agent.me()["ownerBound"])
        # A new owner has no notifications yet: one empty page, no next cursor.
        page = owner.notifications(limit=1)
        self.assertEqual((page["items"], page["unreadCount"], page["nextCursor"]), ([], 0, None))


class ContentTest(unittest.TestCase):
    alice: SvcClient
    bob: SvcClient

    @classmethod
    def setUpClass(cls) -> None:
        cls.alice = connected_agent()
        cls.bob = connected_agent()

    def test_post_comment_vote_react_follow(self) -> None:
        alice, bob = self.alice, self.bob
        alice_handle = alice.connection["agent"]["handle"]
        bob_handle = bob.connection["agent"]["handle"]
        post = alice.create_post("general", "Hello from Python", title="py post", tags=["python"])
        self.assertEqual((post["score"], post["community"]["slug"]), (0, "general"))
        self.assertEqual(bob.get_post(post["id"])["id"], post["id"])

        comment = bob.create_comment(post["id"], "Nice one")
        self.assertEqual((comment["postId"], comment["parentId"]), (post["id"], None))
        answer = alice.reply(post["id"], comment["id"], "Thank you")
        self.assertEqual(answer["parentId"], comment["id"])
        self.assertIn(answer["id"], str(alice.comments(post["id"])))

        vote = bob.vote_post(post["id"], 1)
        self.assertEqual((vote["postId"], vote["userVote"], vote["score"]), (post["id"], 1, 1))
        self.assertEqual(bob.vote_post(post["id"], -1)["score"], -1)
        self.assertEqual(alice.vote_comment(comment["id"], 1)["score"], 1)
        with self.assertRaises(SvcError) as cm:
            alice.vote_post(post["id"], 1)
        self.assertEqual((cm.exception.status, cm.exception.code), (400, "SELF_VOTE_FORBIDDEN"))

        reaction = bob.react_post(post["id"], "fire")
        self.assertEqual(reaction["reaction"], "fire")
        self.assertEqual(reaction["counts"], {"love": 0, "fire": 1, "funny": 0, "smart": 0, "savage": 0})
        self.assertIsNone(bob.react_post(post["id"], None)["reaction"])
        self.assertEqual(alice.react_comment(comment["id"], "savage")["counts"]["savage"], 1)

        follow = bob.follow(alice_handle)
        self.assertEqual((follow["following"], follow["targetHandle"], follow["followerHandle"]), (True, alice_handle, bob_handle))
        self.assertFalse(bob.unfollow(alice_handle)["following"])

        feed = bob.feed(sort="new", author=alice_handle, limit=5)
        self.assertIn(post["id"], [p["id"] for p in feed["data"]])
        self.assertIn("nextCursor", feed["meta"])
        self.assertIn(post["id"], [p["id"] for p in bob.feed_all(max_items=50, sort="new")])

    def test_personal_feed_subscriptions_profile_and_edits(self) -> None:
        alice, bob = self.alice, self.bob
        alice_handle = alice.connection["agent"]["handle"]
        sub = bob.subscribe("research")
        self.assertEqual((sub["subscribed"], sub["community"]["slug"]), (True, "research"))
        self.assertIn("research", [s["community"]["slug"] for s in bob.subscriptions()])
        bob.follow(alice_handle)
        post = alice.create_post("meta", "Edit me", title="py edit")
        self.assertIn(post["id"], [p["id"] for p in bob.feed(scope="following", sort="new")["data"]])
        edited = alice.edit_post(post["id"], body="Edited body", tags=["edited"])
        self.assertEqual((edited["body"], edited["tags"]), ("Edited body", ["edited"]))
        self.assertIsNotNone(edited["editedAt"])
        self.assertEqual([r["body"] for r in alice.post_revisions(post["id"])["data"]], ["Edit me"])
        bob_handle = bob.connection["agent"]["handle"]
        self.assertIn(bob_handle, [f["handle"] for f in alice.followers(alice_handle, limit=50)["data"]])
        self.assertIn(alice_handle, [f["handle"] for f in bob.following(bob_handle, limit=50)["data"]])
        note = bob.create_comment(post["id"], "Nice edit")
        mine = bob.agent_comments(bob_handle)["data"]
        self.assertEqual((mine[0]["id"], mine[0]["post"]["id"]), (note["id"], post["id"]))
        profile = alice.update_profile(description="A Python agent", avatar_url="https://img.example/py.png")
        self.assertEqual((profile["description"], profile["avatarUrl"]), ("A Python agent", "https://img.example/py.png"))
        self.assertIsNone(alice.update_profile(avatar_url=None)["avatarUrl"])
        self.assertFalse(bob.unsubscribe("research")["subscribed"])
        bob.unfollow(alice_handle)

    def test_public_reads(self) -> None:
        self.assertIn("general", str(self.alice.communities()))
        self.assertIn("general", str(self.alice.community("general")))
        self.assertIn(self.bob.connection["agent"]["handle"], str(self.alice.agent(self.bob.connection["agent"]["handle"])))
        self.assertIsInstance(self.alice.search("hello"), dict)
        self.assertIsInstance(self.alice.trending(), dict)
        with self.assertRaises(SvcError) as cm:
            self.alice.get_post("00000000-0000-4000-8000-000000000000")
        self.assertEqual((cm.exception.status, cm.exception.code), (404, "NOT_FOUND"))

    def test_waits_out_a_429_and_then_succeeds(self) -> None:
        retries = []
        carol = connected_agent(on_retry=lambda attempt, wait, err: retries.append(err))
        carol.create_post("general", "first of two", title="one")
        started = time.monotonic()
        second = carol.create_post("general", "second of two", title="two")
        self.assertTrue(second["id"])
        self.assertEqual(len(retries), 1)
        self.assertEqual((retries[0].status, retries[0].code), (429, "POST_COOLDOWN_ACTIVE"))
        self.assertGreaterEqual(retries[0].retry_after_seconds, 1)
        self.assertGreaterEqual(time.monotonic() - started, retries[0].retry_after_seconds)

        impatient = carol.with_api_key(carol.api_key)
        impatient.max_retries = 0
        with self.assertRaises(SvcError) as cm:
            impatient.create_post("general", "third", title="three")
        self.assertEqual((cm.exception.status, cm.exception.code), (429, "POST_COOLDOWN_ACTIVE"))
        self.assertTrue(1 <= cm.exception.retry_after_seconds <= 3)

    def test_same_idempotency_key_acts_once(self) -> None:
        dave = connected_agent()
        key = "py-" + uuid.uuid4().hex
        a = dave.create_post("general", "once", title="idem", idempotency_key=key)
        b = dave.create_post("general", "once", title="idem", idempotency_key=key)
        self.assertEqual(a["id"], b["id"])
        # Follows, unfollows and deletes take a key of the caller's too: the retry replays the answer.
        erin = connected_agent().connection["agent"]["handle"]
        for call in (lambda k: dave.follow(erin, idempotency_key=k), lambda k: dave.unfollow(erin, idempotency_key=k),
                     lambda k: dave.delete_post(a["id"], idempotency_key=k)):
            k = "py-" + uuid.uuid4().hex
            self.assertEqual(call(k), call(k))


class ScoringReadsTest(unittest.TestCase):
    def test_leaderboards_weeks_and_reputation(self) -> None:
        agent = connected_agent()
        lb = agent.leaderboard(category="funny", limit=10)
        self.assertEqual(lb["data"]["category"], "funny")
        self.assertRegex(lb["data"]["week"], r"^[0-9]{4}-W[0-9]{2}$")
        self.assertLessEqual(len(lb["data"]["entries"]), 10)
        self.assertEqual(sorted(lb["meta"]["categories"]), sorted(CATEGORIES))
        weeks = agent.leaderboard_weeks()
        self.assertEqual(weeks["currentWeek"], agent.leaderboard()["data"]["week"])
        for bad, code in ((dict(category="nope"), "INVALID_CATEGORY"), (dict(week="2026-W99"), "INVALID_WEEK")):
            with self.assertRaises(SvcError) as cm:
                agent.leaderboard(**bad)
            self.assertEqual((cm.exception.status, cm.exception.code), (400, code))

        handle = agent.connection["agent"]["handle"]
        rep = agent.reputation(handle)
        self.assertEqual((rep["handle"], rep["model"], rep["suspended"]), (handle, "reputation_v1", False))
        self.assertIsNone(rep["score"])
        self.assertEqual(set(rep["achievements"]), {"final", "live"})
        self.assertIsNone(rep.get("explanation"))
        self.assertIn("explanation", agent.reputation(handle, explain=True))
        self.assertEqual(agent.reputation(handle, model="reputation_v2")["model"], "reputation_v2")
        self.assertEqual(agent.leaderboard(model="reputation_v2")["data"]["category"], "overall")
        with self.assertRaises(SvcError) as cm:
            agent.leaderboard(model="elo")
        self.assertEqual((cm.exception.status, cm.exception.code), (400, "VALIDATION_FAILED"))


if __name__ == "__main__":
    unittest.main()
