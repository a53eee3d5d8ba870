"""A generated sample history: one support customer over several weeks (issue 9, point 4).

Deterministic (a seeded ``random.Random``): the same arguments always give byte-identical JSONL.
The script covers what a support bot's memory must get right: the customer's identity, orders and
their totals, a changed address and a changed contact preference (so supersession matters), a
standing instruction (the protected channel), policy answers from tools (procedural rules), and
plenty of chatter that should leave the window first.

The gold current facts at the end are returned with the turns so the replay can score itself.
"""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

CUSTOMER = "Dana Whitfield"
ACCOUNT = "ACC-55102"
PIN = "4471"
#: secret values in the sample (checked, never used to detect): the PIN Dana gives to verify the address change
SECRETS = {PIN}

CHATTER_USER = [
    "Oh interesting, thanks for checking that for me.",
    "Got it, that seems fair enough I suppose.",
    "Haha, it's been one of those weeks.",
    "Sorry, my cat just walked across the keyboard.",
    "Okay, sounds good.",
    "Thanks, you've been really patient with me.",
    "Hold on, let me grab a coffee first.",
    "Great, appreciate it!",
]
CHATTER_AGENT = [
    "No problem at all, happy to help!",
    "Of course, take your time.",
    "Thanks for your patience while I look into this.",
    "Glad I could help with that.",
    "Sounds good!",
]

# Each session: (day offset, [(role, text, extra)]). "tool" turns answer the assistant's call.
_POLICY_RETURNS = "Policy: returns within 30 days are free; after the 30-day window a 10% restocking fee applies."
_POLICY_WARRANTY = "Product search: Aurora earbuds carry a 2-year limited warranty."
_POLICY_SHIPPING = "Policy: orders to PO boxes ship by standard post and take 5-7 business days."
_POLICY_PRICE_MATCH = "Policy: price matching is available within 14 days of purchase with a receipt."


def _script() -> list[tuple[int, list[tuple[str, str]]]]:
    return [
        (0, [
            ("user", f"Hi, my name is {CUSTOMER}. I have a question about an order."),
            ("assistant", "Hello Dana! I'd be glad to help. Could you give me your account number?"),
            ("user", f"My account number is {ACCOUNT}."),
            ("assistant", "Thanks. Which order is this about?"),
            ("user", "Order ORD-3300, the Aurora earbuds. It was $200."),
            ("assistant", "I see ORD-3300 for $200.00, delivered to 12 Harbor Lane, Portland."),
            ("user", "Yes, my address is 12 Harbor Lane, Portland, OR 97201."),
            ("user", "Please never call me. I prefer email contact, at dana.whitfield@example.com."),
            ("assistant", "Noted: email only, no calls."),
        ]),
        (2, [
            ("user", "Hi again, can I still return the earbuds? I bought them 35 days ago."),
            ("assistant", "Let me check the return policy for you."),
            ("tool", _POLICY_RETURNS),
            ("assistant", "You're past the 30-day window, so a 10% restocking fee applies: you'd get $180.00 back (200 * 0.9)."),
            ("user", "Okay, I accept the $180.00 refund on ORD-3300."),
            ("assistant", "Done. The refund of $180.00 will reach your card in 3-5 business days."),
        ]),
        (5, [
            ("user", "Before I buy new earbuds, what warranty do the Aurora ones have?"),
            ("tool", _POLICY_WARRANTY),
            ("assistant", "They come with a 2-year limited warranty."),
            ("user", "Then I'll order the Aurora Pro instead. Order ORD-3391 please, $249."),
            ("assistant", "Order ORD-3391 placed for $249.00."),
            ("user", "Don't share my order history with anyone else on the account."),
            ("assistant", "Understood, I won't share your order history."),
        ]),
        (9, [
            ("user", "Where is ORD-3391? It hasn't arrived."),
            ("assistant", "ORD-3391 is in transit, expected on Friday."),
            ("user", "Can I also get a price match? I saw it for $229 elsewhere."),
            ("tool", _POLICY_PRICE_MATCH),
            ("assistant", "Yes: within 14 days with a receipt, we refund the $20.00 difference."),
        ]),
        (16, [
            ("user", "I moved last weekend. My address is 48 Cedar Street, Seattle, WA 98101."),
            ("assistant", "Before I change it: for security, what is the PIN on your account?"),
            ("user", f"It's {PIN}."),
            ("assistant", "Thanks, I've updated your address to 48 Cedar Street, Seattle."),
            ("user", "Please send the next order to a PO box: PO Box 7731, Seattle."),
            ("tool", _POLICY_SHIPPING),
            ("assistant", "PO boxes get standard post, 5-7 business days."),
            ("user", "Order ORD-3420 then: a travel case for $35."),
            ("assistant", "Order ORD-3420 placed for $35.00, shipping to PO Box 7731."),
        ]),
        (23, [
            ("user", "From now on I prefer text messages instead of email. My phone is 555-0142."),
            ("assistant", "Updated: you prefer text messages at 555-0142."),
            ("user", "Also, I like the Aurora line a lot, but I dislike the gift wrap upsell."),
            ("assistant", "Noted, no gift wrap offers."),
        ]),
        (30, [
            ("user", "The case from ORD-3420 arrived damaged. Can I return it?"),
            ("tool", _POLICY_RETURNS),
            ("assistant", "It's within 30 days, so the return is free. I've emailed a prepaid label... sorry, texted it to 555-0142."),
            ("user", "Thanks. Confirm it goes back to 48 Cedar Street if you resend?"),
            ("assistant", "Yes, 48 Cedar Street, Seattle, WA 98101."),
        ]),
        (37, [
            ("user", "Last thing: what's my current address on file and how will you contact me?"),
            ("assistant", "48 Cedar Street, Seattle, WA 98101, and text messages at 555-0142."),
            ("user", "Perfect, that's right."),
        ]),
    ]


GOLD_FACTS = {
    "user.name": CUSTOMER,
    "user.account_id": ACCOUNT,
    "user.address": "48 Cedar Street, Seattle, WA 98101",
    "user.contact_preference": "text",
}


def generate_sample_history(*, seed: int = 7, filler_sessions: int = 24, start: datetime | None = None) -> list[dict[str, Any]]:
    """The sample customer's turns as OpenAI-shaped messages with ISO ``created_at`` (UTC).

    :param seed: seeds the chatter and the filler sessions (same seed, same bytes).
    :param filler_sessions: extra short status-check sessions spread over the weeks (about 8
        turns each) so the history reaches a few hundred turns.
    :returns: messages in time order; about 250-300 turns with the defaults.
    """
    rng = random.Random(seed)
    t0 = start or datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
    sessions: list[tuple[int, list[tuple[str, str]]]] = list(_script())
    orders = ["ORD-3300", "ORD-3391", "ORD-3420"]
    for i in range(filler_sessions):
        day = 1 + (i * 38) // max(1, filler_sessions)
        order = orders[min(len(orders) - 1, day // 14)]
        turns = [
            ("user", rng.choice(["Hi, quick question.", "Hello again!", "Hey, it's Dana."])),
            ("assistant", rng.choice(["Hi Dana, what can I do for you?", "Hello! How can I help today?"])),
            ("user", f"Any update on {order}?"),
            ("assistant", f"{order} is {rng.choice(['being processed', 'in transit', 'delivered', 'with the carrier'])}."),
        ]
        for _ in range(rng.randint(2, 4)):
            turns.append(("user", rng.choice(CHATTER_USER)))
            turns.append(("assistant", rng.choice(CHATTER_AGENT)))
        sessions.append((day, turns))
    sessions.sort(key=lambda s: s[0])
    messages: list[dict[str, Any]] = []
    call_no = 0
    when = t0
    for index, (day, turns) in enumerate(sessions):
        when = max(when, t0 + timedelta(days=day, hours=index % 5))  # never earlier than the last turn
        for role, text in turns:
            if role == "tool":
                call_no += 1
                call_id = f"call_{call_no}"
                messages.append({
                    "role": "assistant", "content": None,
                    "tool_calls": [{"id": call_id, "type": "function",
                                    "function": {"name": "policy_lookup", "arguments": json.dumps({"topic": text.split(":")[0].lower()})}}],
                    "created_at": when.isoformat(),
                })
                when += timedelta(seconds=20)
                messages.append({"role": "tool", "content": text, "tool_call_id": call_id, "name": "policy_lookup",
                                 "created_at": when.isoformat()})
            else:
                messages.append({"role": role, "content": text, "created_at": when.isoformat()})
                if role == "user" and rng.random() < 0.3:
                    when += timedelta(seconds=30)
                    messages.append({"role": "user", "content": rng.choice(CHATTER_USER), "created_at": when.isoformat()})
            when += timedelta(seconds=rng.randint(20, 90))
    return messages


def write_sample_history(path: str | Path, **kwargs: Any) -> Path:
    """Write :func:`generate_sample_history` as JSONL to ``path`` and return the path."""
    p = Path(path)
    with open(p, "w", encoding="utf-8") as fh:
        for msg in generate_sample_history(**kwargs):
            fh.write(json.dumps({k: v for k, v in msg.items() if v is not None or k == "content"}, ensure_ascii=False) + "\n")
    return p
