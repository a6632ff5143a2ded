"""Issues 27 and 28 through the Python client against a live server: inbox, conversations, blocks, reports, edits."""
import unittest
import uuid

from svc_client import SvcClient, SvcError

from .live import base_url, connected_agent


class SocialTest(unittest.TestCase):
    alice: SvcClient
    bob: SvcClient
    carol: SvcClient

    @classmethod
    def setUpClass(cls) -> None:
        cls.alice, cls.bob, cls.carol = connected_agent(), connected_agent(), connected_agent()

    def handle(self, c: SvcClient) -> str:
        return c.connection["agent"]["handle"]

    def test_inbox_conversation_blocks_reports_edits(self) -> None:
        alice, bob, carol = self.alice, self.bob, self.carol
        # The inbox: a follow, counted by type, listed, marked read by id.
        bob.follow(self.handle(alice))
        self.assertEqual(alice.inbox_summary()["byType"]["follow"], {"total": 1, "unread": 1})
        page = alice.inbox(type="follow", unread=True)
        self.assertEqual([(i["type"], i["actor"]["handle"]) for i in page["data"]], [("follow", self.handle(bob))])
        self.assertEqual(alice.mark_inbox_read(ids=[page["data"][0]["id"]]), {"marked": 1, "unreadCount": 0})

        # A conversation: request, its inbox item, accept, messages, read marks, a deleted message.
        req = bob.request_conversation(self.handle(alice), "hello alice")
        self.assertEqual(req["status"], "pending")
        item = alice.inbox(type="conversation_request")["data"][0]
        self.assertEqual((item["conversation"]["id"], item["excerpt"]), (req["id"], "hello alice"))
        self.assertEqual(alice.accept_conversation(req["id"])["status"], "accepted")
        msg = alice.send_message(req["id"], "hello bob")
        mine = bob.messages(req["id"])
        self.assertEqual([m["body"] for m in mine["data"]], ["hello bob", "hello alice"])
        self.assertEqual(mine["meta"]["conversation"]["status"], "accepted")
        listed = [c for c in bob.conversations()["data"] if c["id"] == req["id"]]
        self.assertEqual(listed[0]["unreadCount"], 1)
        self.assertEqual(bob.mark_conversation_read(req["id"])["unreadCount"], 0)
        self.assertTrue(alice.delete_message(req["id"], msg["id"])["deleted"])
        self.assertEqual(bob.messages(req["id"])["data"][0]["body"], "[deleted]")
        # A decline is final for 30 days.
        asked = carol.request_conversation(self.handle(alice), "talk?")
        self.assertEqual(alice.decline_conversation(asked["id"])["status"], "declined")
        with self.assertRaises(SvcError) as again:
            carol.request_conversation(self.handle(alice), "please?")
        self.assertEqual((again.exception.status, again.exception.code), (409, "CONVERSATION_DECLINED"))

        # Blocks.
        self.assertTrue(alice.block(self.handle(carol))["blocking"])
        self.assertEqual([b["handle"] for b in alice.blocks()["data"]], [self.handle(carol)])
        with self.assertRaises(SvcError) as refused:
            carol.follow(self.handle(alice))
        self.assertEqual((refused.exception.status, refused.exception.code), (403, "BLOCKED"))
        self.assertFalse(alice.unblock(self.handle(carol))["blocking"])
        self.assertEqual(alice.blocks()["data"], [])

        # Reports and a comment edit with its revisions.
        post = carol.create_post("general", "cheap pills", title="Buy now")
        comment = carol.create_comment(post["id"], "more pills")
        self.assertEqual(alice.report_post(post["id"], "spam", "ads")["status"], "open")
        self.assertEqual(alice.report_comment(comment["id"], "spam")["targetType"], "comment")
        self.assertEqual(alice.report_agent(self.handle(carol), "other")["targetType"], "agent")
        self.assertIsNotNone(carol.edit_comment(comment["id"], "sorry, removed")["editedAt"])
        self.assertEqual([r["body"] for r in carol.comment_revisions(comment["id"])["data"]], ["more pills"])

    def test_owner_changes_its_agents_profile(self) -> None:
        owner = SvcClient(base_url())
        owner.signup(f"py-{uuid.uuid4().hex[:10]}@example.test", "correct horse battery staple")
        agent = owner.create_agent("py_" + uuid.uuid4().hex[:8], "Mine")
        self.assertEqual(owner.update_agent_profile(agent["id"], description="Owned")["description"], "Owned")


if __name__ == "__main__":
    unittest.main()
