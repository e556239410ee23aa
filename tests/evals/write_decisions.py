"""Writes the decision corpus (``tests/evals/decisions``): developer chats in which a decision is made, and decoys.

Two projects' chats, by both agents, over September to November 2026: a
billing service (``billing``, Python) and a small snapshot CLI (``snapctl``,
Go). In the decision chats the user settles something a later session needs
and could not guess: a measured limit, a rounding rule, an ordering, a set of
accepted values, a mapping, a time-out, a policy; stated outright, confirmed
from the assistant's proposal, or corrected; some amended weeks later by
another chat. The decoy chats are about the same modules and words
(debugging, refactors, questions, reviews) and decide nothing. Design chats
run no commands; a few chats run a test or a query.

``expectations.toml`` is written from the same table (``DECISIONS``), so each
decision's ``from`` is the file its chat was written to. Format:
``docs/eval.md``. Run ``python tests/evals/write_decisions.py`` to write both
again after an edit (the old session files are removed first).
"""

from __future__ import annotations

import json
import shutil
import sys
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from support.agent_sessions import ClaudeSession, CodexRollout

CORPUS = Path(__file__).resolve().parent / "decisions"
OUT = CORPUS / "sessions"

BILLING = ("billing", "/home/maya/src/billing", "git@github.com:tallyhq/billing.git")
SNAPCTL = ("snapctl", "/home/maya/src/snapctl", "git@github.com:tallyhq/snapctl.git")

Turn = tuple[str, ...]  # ("u", text) | ("a", text) | ("$", command, output) | ("$", command, output, exit code)


def at(month: int, day: int, hour: int, minute: int = 0) -> datetime:
    """A moment in 2026 (UTC)."""
    return datetime(2026, month, day, hour, minute, tzinfo=UTC)


@dataclass(frozen=True)
class Decision:
    """A chat in which a decision is made, and what the expectations say about it."""

    id: str
    agent: str  # codex | claude
    when: datetime
    project: tuple[str, str, str]
    turns: tuple[Turn, ...]
    terms: tuple[str, ...]
    said: str
    question: str
    paraphrase: str
    note: str
    replaces: str | None = None


def chat(n: int, agent: str, when: datetime, project: tuple[str, str, str], turns: tuple[Turn, ...]) -> CodexRollout | ClaudeSession:
    """One session in the agent's own format, turn by turn."""
    session: Any = CodexRollout(n, when, project[1], project[2]) if agent == "codex" else ClaudeSession(n, when, project[1])
    for turn in turns:
        if turn[0] == "u":
            session.user(turn[1])
        elif turn[0] == "a":
            session.say(turn[1])
        else:
            code = int(turn[3]) if len(turn) > 3 else 0
            (session.shell if agent == "codex" else session.bash)(turn[1], turn[2], code)
    return session  # type: ignore[no-any-return]


# ---------------------------------------------------------------------------------------------- decisions

DECISIONS: tuple[Decision, ...] = (
    Decision(
        "zero-decimal-rounding", "claude", at(9, 3, 9, 40), BILLING,
        (("u", "customers in japan are complaining again, invoice total is 1 yen more than what they get adding the lines up by hand. can you look at billing/invoices/totals.py"),
         ("a", "Looking at `totals.py`: `line_total()` quantizes every line to the currency's minor unit with `ROUND_HALF_UP`, then `invoice_total()` "
               "sums the rounded lines. For JPY the minor unit is 1, so three lines of 33.5 each become 34 + 34 + 34 = 102 while the exact sum is 100.5.\n\n"
               "Options:\n1. keep rounding per line but switch to banker's rounding (`ROUND_HALF_EVEN`)\n"
               "2. round only once, on the invoice total\n3. keep per-line rounding and push the remainder onto the last line"),
         ("u", "not bankers rounding, accounting hates it. for zero-decimal currencies (JPY, KRW) round once on the invoice total, half-up, lines keep the unrounded amount. everything else stays per line like today"),
         ("a", "Done. `invoice_total()` now sums the unrounded line amounts when the currency is in `ZERO_DECIMAL = {\"JPY\", \"KRW\"}` and quantizes once "
               "with `ROUND_HALF_UP`; `line_total()` returns the exact amount for those currencies. Other currencies are unchanged. Added a test with the 3 × 33.5 case."),
         ("$", ".venv/bin/pytest tests/invoices -q", "........................                                  [100%]\n24 passed in 0.61s")),
        ("zero-decimal", "half-up"),
        "for zero-decimal currencies (JPY, KRW) round once on the invoice total, half-up, lines keep the unrounded amount",
        "JPY invoice for a new customer is 1 yen higher than what the lines add up to, is that a bug?",
        "how do we handle money without cents, like yen, when adding up a bill?",
        "correction of the assistant's options: round once on the total for zero-decimal currencies",
    ),
    Decision(
        "webhook-attempts", "codex", at(9, 5, 14, 10), BILLING,
        (("u", "billing/webhooks/deliver.py retries forever on dead endpoints and the queue backs up every night. put a limit on it"),
         ("a", "I'd cap the attempts in `deliver_with_retry()`. Proposal: 5 attempts with exponential backoff (1m, 2m, 4m, 8m, 16m), then mark the endpoint "
               "`disabled` and email the account owner. That gives up after about 31 minutes and keeps the queue short."),
         ("u", "no, 5 drops too many — we measured it last quarter, customers' endpoints are down for deploys up to ~6h. make it 12 attempts, backoff capped at 1h"),
         ("a", "Changed: `MAX_ATTEMPTS = 12`, delay `min(60 * 2**n, 3600)` seconds, so the last attempt is about 7 hours after the first. After the 12th failure "
               "the endpoint is disabled and the owner gets the `webhook_disabled` email.")),
        ("12 attempts", "backoff"),
        "no, 5 drops too many — we measured it last quarter, customers' endpoints are down for deploys up to ~6h. make it 12 attempts, backoff capped at 1h",
        "customer says our webhooks stopped coming after their endpoint was down for a few hours during a deploy",
        "what's the limit on re-sending events to a dead receiver url before we give up?",
        "correction with a measurement: twelve attempts, not five",
    ),
    Decision(
        "export-rows", "claude", at(9, 8, 10, 5), BILLING,
        (("u", "the csv export for big accounts times out in the browser and support keeps asking engineering to pull files by hand. "
               "let's cap the export at 5,000 rows per file and split into parts beyond that, zip them. 5k is what the old reporting tool did and nobody complained"),
         ("a", "Makes sense. In `billing/exports/csv_export.py` I'll add `ROWS_PER_FILE`, write `export-001.csv`, `export-002.csv`, … and stream them into a zip "
               "when there is more than one part. Single-part exports stay a plain csv so small customers see no change."),
         ("u", "yep"),
         ("a", "Done, with a test that 12,001 rows give three parts.")),
        ("5,000 rows",),
        "let's cap the export at 5,000 rows per file and split into parts beyond that, zip them",
        "customer asks why the transaction export arrives as a zip of several csv files instead of one",
        "how big can one spreadsheet of the account download get before it's cut into pieces?",
        "a rule stated outright; amended on Oct 20 (export-rows-streaming)",
    ),
    Decision(
        "dunning-steps", "codex", at(9, 10, 11, 0), BILLING,
        (("u", "can you wire up the dunning schedule in billing/dunning/schedule.py, its a stub right now"),
         ("a", "Proposal for `DUNNING_STEPS`:\n- due date: the invoice email\n- day 3: friendly reminder\n- day 7: second reminder\n- day 14: final notice, cc the billing contact\n"
               "- day 21: suspend the subscription\n\nAlternative: a shorter 5/10/15 schedule closer to Stripe's default. Which one do you want?"),
         ("u", "the first one. reminders on day 3, 7, 14 and suspend on 21, that's what our contracts say (net 21)"),
         ("a", "Wired up: `DUNNING_STEPS = [Remind(3), Remind(7), FinalNotice(14), Suspend(21)]`, all counted from the due date.")),
        ("3, 7, 14", "suspend"),
        "reminders on day 3, 7, 14 and suspend on 21, that's what our contracts say (net 21)",
        "customer got a payment reminder and asks when their subscription gets cut off if they don't pay",
        "after an unpaid bill, at what points do chasers go out and when is the account cut off?",
        "confirms one of two proposals, with the values; amended on Oct 27 (dunning-steps-later)",
    ),
    Decision(
        "stripe-timeouts", "claude", at(9, 12, 15, 30), BILLING,
        (("u", "payments/stripe_client.py has no timeout at all, a stuck request held a worker for 10 minutes yesterday. what should it be?"),
         ("a", "From the request logs (`PaymentIntent.create`: p50 280 ms, p99 3.1 s) I'd set a connect timeout of 2 s and a read timeout of 8 s, and let the existing "
               "retry with the idempotency key handle the rest. The SDK default of 80 s is far longer than we ever need."),
         ("u", "yes, do that. 8s read / 2s connect"),
         ("a", "Set `stripe.default_http_client = RequestsClient(timeout=(2, 8))` in `stripe_client.py`, with a test that a slow fake server raises `StripeTimeout`.")),
        ("read timeout", "8 s"),
        "yes, do that. 8s read / 2s connect",
        "PaymentIntent.create fails with a ReadTimeout for a customer in australia during peak hours",
        "how long do we wait on the card processor before abandoning a call?",
        "confirmation of the assistant's proposal (values from measured latencies)",
    ),
    Decision(
        "currencies", "codex", at(9, 15, 9, 20), BILLING,
        (("u", "which currencies should checkout accept? product wants a list before the EU lauch"),
         ("a", "Right now `SUPPORTED_CURRENCIES` in `billing/currency.py` is only EUR and USD. Stripe can settle GBP, CHF, SEK, PLN, CZK and HUF for us as well. "
               "Each extra currency needs a price table and its own rounding, so I'd start with the ones where we already have customers."),
         ("u", "ok: EUR, USD, GBP, CHF and SEK. those are the five where we have >20 customers each. everything else gets billed in EUR"),
         ("a", "Set `SUPPORTED_CURRENCIES = (\"EUR\", \"USD\", \"GBP\", \"CHF\", \"SEK\")`; an account with any other country currency is billed in EUR.")),
        ("GBP, CHF and SEK",),
        "ok: EUR, USD, GBP, CHF and SEK. those are the five where we have >20 customers each. everything else gets billed in EUR",
        "a new customer from oslo wants to pay in their local currency but checkout billed them in EUR",
        "which kinds of cash can a buyer settle in on our site?",
        "a set of accepted values; amended on Nov 9 (currencies-nordics)",
    ),
    Decision(
        "invoice-numbers", "claude", at(9, 17, 13, 45), BILLING,
        (("u", "accounting says the invoice numbers have gaps. billing/invoices/numbering.py uses the db sequence and a rollback burns a number"),
         ("a", "Right, Postgres sequences are not transactional, so any rolled-back finalisation skips a number. Two ways out:\n"
               "(a) a counter row per year, locked with `SELECT … FOR UPDATE` in the same transaction as the finalisation;\n"
               "(b) assign numbers in a separate serial step after commit."),
         ("u", "(a). and the format is INV-<year>-<6 digit seq>, counter starts over every january. german tax office wants it gapless per year, that's the whole reason"),
         ("a", "Done: `invoice_counters(year, last)` locked per finalisation, numbers formatted `f\"INV-{year}-{seq:06d}\"`, and a test that a rollback leaves no gap.")),
        ("INV-<year>", "january"),
        "the format is INV-<year>-<6 digit seq>, counter starts over every january",
        "first invoice of 2027 got number INV-2027-004813, accounting says it's wrong",
        "how are bill identifiers built, and do they restart at some point?",
        "picks an option and states the format and reset rule",
    ),
    Decision(
        "downgrade-renewal", "codex", at(9, 19, 10, 30), BILLING,
        (("u", "how should proration work when someone changes plans mid cycle? subscriptions/proration.py does something weird for downgrades"),
         ("a", "Today both directions credit the unused days immediately, so a downgrade creates a negative invoice line. Options:\n"
               "1. prorate both ways immediately (current)\n2. upgrades prorated now, downgrades at the next renewal\n3. no proration at all, changes at renewal"),
         ("u", "2. upgrades get charged the prorated difference right away, downgrades only kick in at the next renewal and we don't refund the difference. finance doesn't want negative invoices"),
         ("a", "Changed `change_plan()`: upgrades create an immediate prorated charge; downgrades are stored as `pending_plan` and applied by the renewal job.")),
        ("downgrades", "next renewal"),
        "upgrades get charged the prorated difference right away, downgrades only kick in at the next renewal and we don't refund the difference",
        "customer downgraded to the cheaper plan yesterday but still pays the old price and got no credit",
        "a client moves to a lower tier halfway through the month: when does that take effect, and is money given back?",
        "picks option 2 and states the policy",
    ),
    Decision(
        "idempotency-ttl", "claude", at(9, 22, 11, 15), BILLING,
        (("u", "the idempotency_keys table is 40GB. how long do we acutally need to keep keys?"),
         ("a", "Clients retry within minutes normally, and Stripe keeps its own keys for 24 hours. I'd keep ours 24 hours too and delete older rows in the nightly job, "
               "in chunks of 10k so it doesn't lock the table."),
         ("u", "sounds right, 24 hours it is"),
         ("a", "Added `purge_idempotency_keys(older_than=timedelta(hours=24))` to the nightly job.")),
        ("24 hours", "idempotency"),
        "sounds right, 24 hours it is",
        "customer was charged twice for one order after their app retried the payment request",
        "how long do we remember a client's request token so a repeat isn't billed twice?",
        "confirmation; amended on Oct 14 (idempotency-ttl-longer)",
    ),
    Decision(
        "pdf-font", "codex", at(9, 24, 16, 0), BILLING,
        (("u", "pdf invoices for our taiwanese customers show empty boxes instead of the company name"),
         ("a", "The template in `billing/pdf/render.py` uses Helvetica, which has no CJK glyphs. Options: register Noto Sans CJK only as a fallback for those glyphs, "
               "or switch the whole template to Noto Sans (with the CJK variant)."),
         ("u", "switch everything to noto sans, one font for all invoices. mixing fonts looked awful when we tried it on the quotes pdf"),
         ("a", "Switched the invoice and credit note templates to Noto Sans / Noto Sans CJK TC, bundled under `billing/pdf/fonts/`.")),
        ("noto sans", "pdf"),
        "switch everything to noto sans, one font for all invoices",
        "korean customer's company name shows up as empty boxes on the invoice pdf",
        "which typeface do the printable bills use?",
        "a rule stated after the assistant's two options",
    ),
    Decision(
        "page-size", "claude", at(9, 26, 9, 50), BILLING,
        (("u", "GET /v1/invoices without a limit returns everything, a partner pulled 80k rows in one call and the api box went oom. "
               "set defaults in api/pagination.py: page size 50 by default, 200 max, anything above gets clamped not rejected"),
         ("a", "Done: `DEFAULT_LIMIT = 50`, `MAX_LIMIT = 200`, and `limit=1000` is silently lowered to the maximum; the response's `limit` field says what was used.")),
        ("200 max", "clamped"),
        "page size 50 by default, 200 max, anything above gets clamped not rejected",
        "partner integration calls GET /v1/invoices?limit=1000 and only ever gets part of them back",
        "what's the most records one list call can return, and what happens if a client asks for more?",
        "a rule with a measured reason (an out-of-memory)",
    ),
    Decision(
        "credit-order", "codex", at(9, 29, 14, 20), BILLING,
        (("u", "credits/apply.py — when a customer has a credit note, a promo credit and account balance, which gets used first? right now it's dict order lol"),
         ("a", "Common choices: (a) expiring credit first, since promo credits expire; (b) oldest first; (c) keep the customer's cash-like balance for last so it stays refundable."),
         ("u", "promo credit first since it expires, then the oldest credit note, account balance last because that one is refundable cash"),
         ("a", "`apply_credits()` now sorts by `(kind_rank, issued_at)` with promo → credit note → balance.")),
        ("promo credit first", "balance last"),
        "promo credit first since it expires, then the oldest credit note, account balance last because that one is refundable cash",
        "customer's account balance got used up on an invoice while their promo credit expired unused",
        "when a client holds several kinds of prepaid value, in what sequence are they consumed?",
        "an ordering",
    ),
    Decision(
        "fx-invoice-date", "claude", at(10, 1, 10, 0), BILLING,
        (("u", "fx/rates.py converts foreign currency invoices at the payment date rate. is that right?"),
         ("a", "It's a reasonable default: converting at the payment date matches what actually arrives in the bank account, so reconciliation is simpler. "
               "I can make that explicit and add a test."),
         ("u", "no — use the ECB reference rate of the invoice date. our tax advisor says the VAT amount in EUR has to be fixed when the invoice is issued, not when it's paid"),
         ("a", "Changed `convert_for_invoice()` to look up the ECB rate for `invoice.issued_on` (falling back to the last published rate before it on weekends).")),
        ("ECB", "invoice date"),
        "use the ECB reference rate of the invoice date",
        "the EUR tax amount on a USD invoice changed after the customer paid two weeks late",
        "which day's exchange quote converts foreign money on our bills?",
        "correction of the assistant's default",
    ),
    Decision(
        "reverse-charge", "codex", at(10, 2, 15, 40), BILLING,
        (("u", "tax/vat.py treatment table, can you fill it in. EU business with a valid VAT id → reverse charge, 0% on the invoice plus the legal note. "
               "EU business without VAT id or consumer → our german 19%. UK → outside scope, no VAT. rest of world → no VAT"),
         ("a", "Filled in `treatment_for(customer)`: `REVERSE_CHARGE` for EU B2B with a validated id (VIES), `DOMESTIC_19` for EU without id, `OUT_OF_SCOPE` for GB and everything else. "
               "The note text comes from `notes/reverse_charge.de.txt`.")),
        ("reverse charge", "VAT id"),
        "EU business with a valid VAT id → reverse charge",
        "french company complains we charged them german 19% VAT although they gave us their VAT number",
        "how are sales tax rules picked per buyer type and country?",
        "a mapping stated outright",
    ),
    Decision(
        "invoice-retention", "claude", at(10, 5, 11, 30), BILLING,
        (("u", "legal asked about deleting old invoices for gdpr erasure requests. audit/retention.py deletes everything after 3 years"),
         ("a", "German law (§147 AO, GoBD) requires invoices to be kept for 10 years, so deleting them after 3 is a problem. Options: keep invoices 10 years and anonymise "
               "the customer record on erasure, or keep everything 10 years."),
         ("u", "right, keep invoices and credit notes 10 years from the end of the year they were issued, everything else customer-related goes after 3. erasure requests anonymise the contact data but leave the invoice"),
         ("a", "Done: `RETENTION = {\"invoice\": 10, \"credit_note\": 10, \"default\": 3}` (years, counted from Dec 31 of the issue year), and erasure now anonymises.")),
        ("10 years", "credit notes"),
        "keep invoices and credit notes 10 years from the end of the year they were issued",
        "customer asked for gdpr erasure and the cleanup job deleted their old invoices too",
        "for how long must we hold on to billing documents?",
        "a rule after the assistant's options, with the legal reason",
    ),
    Decision(
        "reminder-hours", "codex", at(10, 6, 8, 50), BILLING,
        (("u", "reminder emails go out at 3am for our US customers because the job runs on berlin time. only send dunning mail between 9am and 5pm in the customer's own timezone, weekdays only"),
         ("a", "Added `next_send_slot(customer)` in `billing/emails/send_window.py`: it takes `customer.timezone` (default Europe/Berlin) and moves the send to the next weekday "
               "inside the window.")),
        ("9am", "timezone"),
        "only send dunning mail between 9am and 5pm in the customer's own timezone, weekdays only",
        "customer in california says our dunning emails wake them up at 3am",
        "at what hours are chaser messages allowed to leave, and whose clock counts?",
        "a rule stated outright",
    ),
    Decision(
        "rate-limit", "claude", at(10, 8, 14, 0), BILLING,
        (("u", "we need a rate limit on the public api before the partner launch. api/ratelimit.py"),
         ("a", "I'd start with 100 requests per minute per API key with a burst of 20 — that's typical for billing APIs and protects the database."),
         ("u", "100 is way too low, Fieldmark syncs at ~410/min at month end (checked grafana). 600 per minute per key, burst 100"),
         ("a", "Set `LIMIT = 600` per minute and `BURST = 100` per key in the redis token bucket.")),
        ("600 per minute",),
        "600 per minute per key, burst 100",
        "our biggest partner gets HTTP 429 from the public api during their month-end sync",
        "how many calls can one client make to the public interface before being throttled?",
        "correction with a measurement",
    ),
    Decision(
        "refund-window", "codex", at(10, 9, 10, 10), BILLING,
        (("u", "refunds.py: customers can self-refund any payment right now. limit self-service refunds to 14 days after payment, older ones have to go through support. chargebacks were eating us"),
         ("a", "Added the check to `request_refund()`: past 14 days it returns `refund_requires_support` and the portal shows the contact form instead of the button.")),
        ("14 days", "self-service"),
        "limit self-service refunds to 14 days after payment, older ones have to go through support",
        "customer says the refund button disappeared from the portal for a payment from last month",
        "until when can a buyer get money back on their own, without a ticket?",
        "a rule with its reason",
    ),
    Decision(
        "minimum-charge", "claude", at(10, 12, 9, 30), BILLING,
        (("u", "stripe rejects charges below 0.50 EUR and we get amount_too_small errors on tiny usage invoices:\n\n"
               "stripe.error.InvalidRequestError: Request req_8Kq2: Amount must be at least €0.50 eur\n\n"
               "invoices under 0.50 shouldn't be charged — carry the amount over to the next month's invoice"),
         ("a", "Added a `carry_over` line type: `finalize()` skips the charge when the total is below the minimum and adds the amount as a line on the next invoice.")),
        ("0.50", "carry"),
        "invoices under 0.50 shouldn't be charged — carry the amount over to the next month's invoice",
        "usage invoice for 0.32 EUR never got charged and isn't overdue either, bug?",
        "what happens to very tiny bills that the card processor won't accept?",
        "a rule after a pasted error",
    ),
    Decision(
        "intent-status-map", "codex", at(10, 13, 16, 20), BILLING,
        (("u", "map stripe payment intent statuses to our invoice states in payments/status.py, it's a big if/elif right now"),
         ("a", "Proposal:\n\n| stripe | invoice |\n| --- | --- |\n| requires_payment_method | open |\n| requires_action | pending |\n| processing | pending |\n"
               "| succeeded | paid |\n| canceled | void |\n\nAlternative: keep `requires_action` as `open` so the customer can simply retry."),
         ("u", "yep the table, requires_action stays pending — 3DS customers were getting a second reminder while still in the bank's flow"),
         ("a", "Replaced the if/elif with `STATUS_MAP` and a test per status.")),
        ("requires_action", "pending"),
        "yep the table, requires_action stays pending",
        "customers in the 3DS step get an 'invoice unpaid' reminder while they're still confirming with their bank",
        "what state does a bill show while the buyer is still verifying the card with their bank?",
        "confirmation of a proposed mapping",
    ),
    Decision(
        "one-coupon", "claude", at(10, 15, 13, 10), BILLING,
        (("u", "coupons.py lets people stack as many coupons as they want, someone got 110% off. only one coupon per invoice; if two apply, the bigger discount wins"),
         ("a", "Done: `best_coupon(coupons, subtotal)` picks the single coupon with the highest discount amount; the others are ignored and logged.")),
        ("one coupon per invoice", "bigger discount"),
        "only one coupon per invoice; if two apply, the bigger discount wins",
        "customer entered two coupon codes at checkout and only one got applied",
        "can vouchers be stacked together on a bill?",
        "a rule; amended on Nov 12 (partner-coupon)",
    ),
    Decision(
        "nightly-batch", "codex", at(10, 16, 10, 40), BILLING,
        (("u", "jobs/nightly.py generates invoices one at a time and takes 4 hours. can you batch it"),
         ("a", "I'll generate invoices in batches of 1000 per transaction, with `select_for_update(skip_locked=True)` on the subscriptions so two workers can run side by side."),
         ("u", "no, 1000 gave us lock timeouts on the accounts table when we tried in june. 250 per batch, that ran clean on the staging copy"),
         ("a", "Set `BATCH_SIZE = 250`; the run on the staging copy took 38 minutes.")),
        ("250 per batch",),
        "250 per batch, that ran clean on the staging copy",
        "the nightly invoice generation hit 'lock timeout exceeded' on the accounts table again",
        "how many bills does the overnight run create in one transaction?",
        "correction with a past measurement",
    ),
    Decision(
        "export-time-limit", "claude", at(10, 19, 15, 0), BILLING,
        (("u", "the celery hard time limit for the export task is 120s which is why big exports die. what do you think"),
         ("a", "The largest account (about 1.2M rows) takes about 9 minutes on the prod replica. Options: raise the hard limit to 15 minutes with a soft limit at 13 "
               "so the task can write a partial-file marker; or move exports to their own queue with no limit."),
         ("u", "15 minutes hard / 13 soft, keep it on the same queue. we don't want a job that can run forever"),
         ("a", "Set `time_limit=15 * 60, soft_time_limit=13 * 60` on `export_transactions`; on `SoftTimeLimitExceeded` it writes `PARTIAL` into the manifest.")),
        ("15 minutes", "soft"),
        "15 minutes hard / 13 soft, keep it on the same queue",
        "the nightly export job gets killed after a few minutes for our biggest customer",
        "how long may the spreadsheet download worker run before celery stops it?",
        "picks one of the assistant's options, with values",
    ),
    Decision(
        "tax-precision", "codex", at(10, 21, 11, 20), BILLING,
        (("u", "tax calc in tax/vat.py rounds the tax on every step and our totals disagree with datev by a cent now and then"),
         ("a", "We compute tax per line, round it to 2 decimals, then sum. Options: keep 4 decimal places for the intermediate values and round to 2 only on the final "
               "tax amount per rate; or compute tax on the rate's net subtotal only."),
         ("u", "do that — 4 decimal places in between, round to 2 only once per tax rate at the end. datev does it the same way"),
         ("a", "Changed `tax_lines()`: amounts carry `Decimal` with 4 places until the per-rate sum, which is quantized to 0.01 half-up.")),
        ("4 decimal places", "tax rate"),
        "4 decimal places in between, round to 2 only once per tax rate at the end",
        "datev shows VAT one cent different from our invoice pdf on a few invoices every month",
        "how precise are the partial figures inside the sales-levy calculation?",
        "confirmation of the first option, restated",
    ),
    Decision(
        "late-fee", "claude", at(10, 22, 10, 0), BILLING,
        (("u", "fees/late_fee.py: add a late fee for B2B invoices more than 30 days overdue. 2% of the open amount, capped at 50 EUR"),
         ("a", "Added `late_fee(invoice, today)`: B2B only, from day 31 after the due date, 2% of the open amount, `min(fee, Decimal(\"50.00\"))`, as its own line on the next invoice.")),
        ("2%", "late fee"),
        "add a late fee for B2B invoices more than 30 days overdue. 2% of the open amount, capped at 50 EUR",
        "a business customer disputes the extra fee on their invoice after paying late",
        "what penalty do companies owe us when they settle too slowly?",
        "a rule; amended on Nov 18 (late-fee-flat)",
    ),
    Decision(
        "draft-order", "codex", at(10, 23, 14, 30), BILLING,
        (("u", "the invoice list in the dashboard api — what order should it be in? support says they can never find drafts"),
         ("a", "Options: (1) by issue date desc, drafts mixed in by created date; (2) drafts at the top, then finalised invoices by issue date desc; (3) by due date."),
         ("u", "2, drafts at the top then newest issue date first. tie-break on invoice number desc"),
         ("a", "`InvoiceQuerySet.for_dashboard()` orders by `(status != 'draft', -issued_on, -number)`.")),
        ("drafts at the top",),
        "drafts at the top then newest issue date first",
        "support can't find the draft invoice they just created in the dashboard list",
        "in what sequence does the bills page show entries?",
        "an ordering, chosen from options",
    ),
    Decision(
        "signature-tolerance", "claude", at(10, 26, 9, 15), BILLING,
        (("u", "incoming stripe webhooks fail the signature check sometimes:\n\nstripe.error.SignatureVerificationError: Timestamp outside the tolerance zone (1792993511)"),
         ("a", "The default tolerance is 300 s. One worker's clock was 7 minutes off (chrony wasn't running on worker-3). I'd fix chrony and keep 300 s rather than widening it: "
               "a wider window makes replaying a captured event easier."),
         ("u", "agreed, keep 300s and fix the clock. don't widen it"),
         ("a", "Left `tolerance=300` as is and added the chrony check to the worker's health check.")),
        ("300", "tolerance"),
        "agreed, keep 300s and fix the clock. don't widen it",
        "some stripe webhooks are rejected with 'Timestamp outside the tolerance zone' on one worker",
        "how much time drift do we accept on inbound event verification?",
        "confirmation that a value stays",
    ),
    Decision(
        "trial-pause", "codex", at(10, 28, 16, 45), BILLING,
        (("u", "what happens when a trial ends and there's no card? subscriptions/trial.py charges, fails and then dunning starts, which is nonsense"),
         ("a", "Options: cancel at trial end; pause the subscription and keep the data for a while; or convert to the free plan."),
         ("u", "pause it, keep their data for 30 days, no invoice and no dunning. if they add a card in that window we resume without a new trial"),
         ("a", "`end_trial()` now pauses subscriptions without a payment method, schedules deletion at +30 days and skips invoicing.")),
        ("pause", "30 days"),
        "pause it, keep their data for 30 days, no invoice and no dunning",
        "a trial ended without a card and the customer got a dunning email and an unpaid invoice",
        "what becomes of an evaluation account that never entered a card?",
        "a policy after options",
    ),
    Decision(
        "peak-seats", "claude", at(10, 30, 11, 0), BILLING,
        (("u", "for per-seat plans bill the highest seat count reached during the period, not the count on the last day. people were removing users on the 30th and adding them back on the 1st"),
         ("a", "Changed `seats_for_period()` to take the max over the seat-change log for the period instead of the snapshot at period end.")),
        ("highest seat count",),
        "for per-seat plans bill the highest seat count reached during the period, not the count on the last day",
        "account had 40 seats most of the month but the invoice only billed 5",
        "which user total gets charged on subscriptions priced by headcount?",
        "a rule with the abuse that prompted it",
    ),
    # ---- amendments (weeks later)
    Decision(
        "idempotency-ttl-longer", "codex", at(10, 14, 10, 0), BILLING,
        (("u", "Amendment to the idempotency key expiry: the mobile app queues payments offline over the weekend and replays them on monday, we double-charged 6 customers last weekend. keep keys for 72 hours."),
         ("a", "Changed the nightly purge to `older_than=timedelta(hours=72)`. The table grows to about 3× its current size; I added an index on `created_at` so the purge stays fast.")),
        ("72 hours", "idempotency"),
        "Amendment to the idempotency key expiry: the mobile app queues payments offline over the weekend and replays them on monday, we double-charged 6 customers last weekend. keep keys for 72 hours.",
        "customer on the mobile app was charged twice on monday for a purchase made on saturday",
        "how long do we remember a client's request token so a repeat isn't billed twice?",
        "amends the 24 hours",
        "idempotency-ttl",
    ),
    Decision(
        "export-rows-streaming", "codex", at(10, 20, 9, 30), BILLING,
        (("u", "we changed our mind about the export split. the streaming writer landed and the browser timeout is gone, so from now on one file holds up to 20,000 rows before we split. finance wants fewer parts"),
         ("a", "Updated `ROWS_PER_FILE` in `csv_export.py` and the test (now 41,000 rows give three parts).")),
        ("20,000 rows",),
        "from now on one file holds up to 20,000 rows before we split",
        "finance complains the monthly transaction export is a zip with way too many csv parts",
        "how big can one spreadsheet of the account download get before it's cut into pieces?",
        "amends the 5,000 rows",
        "export-rows",
    ),
    Decision(
        "dunning-steps-later", "claude", at(10, 27, 14, 0), BILLING,
        (("u", "we changed our mind about the dunning steps. three customers complained the first reminder comes way too early, they pay by bank transfer which takes 4-5 days. "
               "drop the early one: reminders on 7, 14, 28 and suspend on day 35"),
         ("a", "Updated `DUNNING_STEPS = [Remind(7), Remind(14), FinalNotice(28), Suspend(35)]` and the email copy (\"second reminder\" is now the first)."),
         ("u", "thx")),
        ("7, 14, 28", "35"),
        "drop the early one: reminders on 7, 14, 28 and suspend on day 35",
        "customer's subscription was suspended while their bank transfer was still on the way",
        "after an unpaid bill, at what points do chasers go out and when is the account cut off?",
        "amends the dunning schedule",
        "dunning-steps",
    ),
    Decision(
        "currencies-nordics", "claude", at(11, 9, 10, 20), BILLING,
        (("u", "from now on we also accept NOK and DKK — the norway/denmark deals closed, 30+ accounts between them. so the list is EUR, USD, GBP, CHF, SEK, NOK, DKK"),
         ("a", "Added NOK and DKK to `SUPPORTED_CURRENCIES` with their price tables (rounded to whole kroner on list prices) and the FX rows.")),
        ("NOK", "DKK"),
        "from now on we also accept NOK and DKK",
        "a new customer from oslo wants to pay in their local currency but checkout billed them in EUR",
        "which kinds of cash can a buyer settle in on our site?",
        "amends the accepted currencies",
        "currencies",
    ),
    Decision(
        "partner-coupon", "codex", at(11, 12, 15, 10), BILLING,
        (("u", "coupons again. partners were losing their referral discount during the black friday promo. from now on a partner coupon can be combined with a single promo coupon, max two on one invoice. never two promo ones"),
         ("a", "Changed `applicable_coupons()`: at most one `kind=partner` and one `kind=promo`; two promo coupons still resolve to the larger one.")),
        ("partner coupon", "max two"),
        "from now on a partner coupon can be combined with a single promo coupon, max two on one invoice. never two promo ones",
        "a reseller's customer used the black friday coupon and lost the partner discount",
        "can vouchers be stacked together on a bill?",
        "amends the one-coupon rule",
        "one-coupon",
    ),
    Decision(
        "late-fee-flat", "codex", at(11, 18, 11, 40), BILLING,
        (("u", "Amendment to the late fee: legal checked, under the EU late payment directive we charge a flat 40 EUR per overdue B2B invoice instead of the percentage. no cap logic needed then"),
         ("a", "Replaced the percentage in `late_fee()` with `Decimal(\"40.00\")` per overdue B2B invoice and removed the cap.")),
        ("40 EUR", "late"),
        "Amendment to the late fee: legal checked, under the EU late payment directive we charge a flat 40 EUR per overdue B2B invoice instead of the percentage",
        "a business customer disputes the extra fee on their invoice after paying late",
        "what penalty do companies owe us when they settle too slowly?",
        "amends the late fee",
        "late-fee",
    ),
    # ---- snapctl (a second project: scopes)
    Decision(
        "exit-codes", "codex", at(9, 9, 17, 0), SNAPCTL,
        (("u", "snapctl exit codes are all 1 right now which makes the cron wrapper useless. 0 ok, 2 usage error, 3 remote unreachable, 4 partial upload (some chunks failed). keep 1 for anything unexpected"),
         ("a", "Added `exitcode.go` with the constants and mapped the errors in `main.go`: `ErrUsage` → 2, `net.OpError`/DNS → 3, `*PartialUploadError` → 4, anything else 1.")),
        ("3 remote unreachable", "4 partial"),
        "0 ok, 2 usage error, 3 remote unreachable, 4 partial upload (some chunks failed). keep 1 for anything unexpected",
        "the cron wrapper should alert differently when the bucket can't be reached, what does snapctl exit with?",
        "what status numbers does the tool hand back to the shell?",
        "a mapping stated outright",
    ),
    Decision(
        "config-precedence", "claude", at(9, 23, 10, 30), SNAPCTL,
        (("u", "where should snapctl look for settings? we have flags, SNAPCTL_ env vars and the toml and it's inconsistent which one wins"),
         ("a", "Proposal: flags > env > config file > defaults, i.e. command-line flags override `SNAPCTL_*` variables, which override `~/.config/snapctl/config.toml`, "
               "which overrides the built-in defaults. That's what most CLIs do (git, kubectl)."),
         ("u", "yes keep it that way. and print where each value came from with --show-config"),
         ("a", "Implemented in `config.Load()` with a `Source` per field; `snapctl --show-config` prints `bucket = backups (env SNAPCTL_BUCKET)` and so on.")),
        ("flags > env",),
        "yes keep it that way. and print where each value came from with --show-config",
        "SNAPCTL_BUCKET is set in the cron env but snapctl still uploads to the bucket named in config.toml",
        "if the same option is given in several places, which one wins?",
        "confirmation of the assistant's proposal",
    ),
    Decision(
        "zstd-level", "codex", at(10, 7, 13, 0), SNAPCTL,
        (("u", "add compression to snapctl upload"),
         ("a", "I'd use zstd at level 19 for the best ratio; dumps compress very well and storage is the main cost."),
         ("u", "no, 19 took 40 min on the 30GB dump, we measured. zstd level 3: 4 min and only 12% bigger"),
         ("a", "Default set to zstd level 3 (`--level` can override it); the 30GB dump compresses in about 4 minutes here too.")),
        ("zstd", "level 3"),
        "no, 19 took 40 min on the 30GB dump, we measured. zstd level 3: 4 min and only 12% bigger",
        "snapctl upload of the big db takes way longer since compression landed",
        "how hard does the tool squeeze database backups unless told otherwise?",
        "correction with a measurement; amended on Nov 4 (zstd-level-threads)",
    ),
    Decision(
        "prune-retention", "claude", at(10, 29, 9, 0), SNAPCTL,
        (("u", "prune policy for snapctl prune: keep 7 daily, 4 weekly and 12 monthly snapshots, delete the rest. that's what the ops runbook promises customers"),
         ("a", "Implemented `prune.Policy{Daily: 7, Weekly: 4, Monthly: 12}` as the default, with buckets counted in UTC.")),
        ("7 daily", "12 monthly"),
        "keep 7 daily, 4 weekly and 12 monthly snapshots, delete the rest",
        "customer wants to restore a snapshot from five months ago and snapctl list doesn't show it",
        "which old copies does the cleanup command hold on to?",
        "a rule",
    ),
    Decision(
        "zstd-level-threads", "claude", at(11, 4, 15, 30), SNAPCTL,
        (("u", "we changed our mind about compression: with the new --threads flag zstd level 6 runs in 5 min on 8 cores and saves another 9%, so from now on the default is level 6 with -T0"),
         ("a", "Changed the default in `compress.go` to level 6 with all cores (`-T0`); `--level` still overrides it.")),
        ("zstd", "level 6"),
        "from now on the default is level 6 with -T0",
        "snapctl upload of the big db takes way longer since compression landed",
        "how hard does the tool squeeze database backups unless told otherwise?",
        "amends the compression level",
        "zstd-level",
    ),
)


# ---------------------------------------------------------------------------------------------- decoys

B, S = BILLING, SNAPCTL

DECOYS: tuple[tuple[tuple[str, str, str], tuple[Turn, ...]], ...] = (
    # totals / rounding
    (B, (("u", "test_invoice_total_eur fails after the decimal refactor:\n\nAssertionError: assert Decimal('10.00') == Decimal('10.0')\n\nwhat changed"),
         ("a", "`Decimal('10.00') == Decimal('10.0')` is actually True, so the assert message is misleading; the test compares `str()` of both. "
               "The refactor dropped the `quantize()` in `invoice_total()` for the test's fixture. I put it back."),
         ("$", ".venv/bin/pytest tests/invoices/test_totals.py -q", "....                                                       [100%]\n4 passed in 0.22s"))),
    (B, (("u", "can you explain what line_total() does with discounts? reading billing/invoices/totals.py and I'm lost"),
         ("a", "`line_total()` takes unit price × quantity, subtracts the line discount (percentage first, then fixed), clamps at zero and quantizes to the currency's "
               "minor unit. Invoice-level coupons are applied later in `invoice_total()`, not here."),
         ("u", "ok so the clamp is why the 110% thing didn't go negative"),
         ("a", "Yes, the line can't go below zero; the invoice total is clamped separately."))),
    (B, (("u", "refactor totals.py, invoice_total is 140 lines. no behaviour change pls"),
         ("a", "Split it into `_subtotal()`, `_apply_coupons()`, `_tax()` and `_round_total()`. Same tests, same outputs; I diffed totals for 500 sample invoices before/after."))),
    (B, (("u", "hmm why does totals.py import from fx? circular import when I open the shell:\n\nImportError: cannot import name 'convert' from partially initialized module 'billing.fx.rates' (most likely due to a circular import)"),
         ("a", "`fx/rates.py` imports `totals` for the `Money` type and `totals` imports `convert`. I moved `Money` into `billing/money.py` so neither imports the other."))),
    (B, (("u", "review my branch rounding-cleanup pls, just renames mostly, want a second pair of eyes"),
         ("a", "Looks fine. Two notes: `round_minor` is still exported under the old name from `billing/__init__.py`, and one docstring in `totals.py` still says `round_line`."))),
    (B, (("u", "what's the rounding mode for CHF? someone said we round to 5 rappen"),
         ("a", "No, CHF is rounded to 0.01 like EUR in `totals.py`. 5-rappen rounding only applies to cash payments, which we don't take."),
         ("u", "ok good"))),
    # webhooks
    (B, (("u", "webhook deliveries to one customer all fail with SSL: CERTIFICATE_VERIFY_FAILED, is that us or them?"),
         ("a", "Them: their endpoint serves a certificate chain without the intermediate. `openssl s_client -connect hooks.example-customer.com:443` shows only the leaf. "
               "Our client verifies against certifi, which is correct."))),
    (B, (("u", "add structured loging to webhooks/deliver.py. attempt number, endpoint id, status code, duration"),
         ("a", "Added a `log.info(\"webhook.attempt\", attempt=n, endpoint=endpoint.id, status=resp.status_code, ms=elapsed)` per attempt and a `webhook.gave_up` line."))),
    (B, (("u", "why does test_deliver_backoff take 40 seconds? I think it sleeps for real"),
         ("a", "It does: `deliver_with_retry()` calls `time.sleep`. I injected a `sleep` parameter (default `time.sleep`) and the test passes a fake that records the delays. "
               "Now 0.02 s."),
         ("$", ".venv/bin/pytest tests/webhooks -q", "..........                                                 [100%]\n10 passed in 0.31s"))),
    (B, (("u", "the webhook payload for invoice.paid is missing the currency field, docs say it's there"),
         ("a", "`serialize_invoice_event()` builds the payload from `invoice.summary()`, which lost `currency` in the money refactor. Added it back and a schema test against docs/webhooks.json."))),
    (B, (("u", "the retry queue dashboard shows 3k pending deliveries. stuck or just scheduled?"),
         ("a", "Scheduled: 2,940 of them have `next_attempt_at` in the future; they belong to 11 endpoints that are currently failing. None is older than its next slot."),
         ("u", "ok. which endpoints"),
         ("a", "Mostly two accounts (acct_2231 and acct_0917) whose servers return 502 since 06:10 UTC."))),
    (B, (("u", "can a customer replay a webhook from the dashboard? support asks"),
         ("a", "Not today. `deliver.py` has `redeliver(event_id)` used by the admin command `manage.py redeliver_webhook`, but nothing exposes it in the dashboard."))),
    # exports
    (B, (("u", "csv export has everything in one column for german excel users"),
         ("a", "German Excel expects `;` as the separator and no BOM means it guesses the encoding too. The file itself is valid csv. Users can use Data → From Text/CSV and pick comma."),
         ("u", "ok I'll send support the import steps"))),
    (B, (("u", "csv_export.py blows up on windows:\n\nUnicodeEncodeError: 'charmap' codec can't encode character '\\u20ac' in position 112"),
         ("a", "The writer opens the temp file without an encoding, so it uses cp1252 on windows dev machines. Passing `encoding=\"utf-8\"` fixes it."))),
    (B, (("u", "add the customer's vat number as a column to the transaction export"),
         ("a", "Added `customer_tax_id` after `customer_name` in `EXPORT_COLUMNS`; empty for consumers. Updated the header test."))),
    (B, (("u", "how does the export decide which rows go into which file part? reading csv_export.py"),
         ("a", "It streams rows ordered by `created_at, id`, counts them and starts a new part when the counter reaches `ROWS_PER_FILE`; the part files are added to the zip as they close."))),
    (B, (("u", "profile the export for account 4411, it's slow"),
         ("$", "py-spy record -o export.svg -- python manage.py export_transactions --account 4411", "py-spy> Sampling process 100 times a second.\npy-spy> Wrote flamegraph data to 'export.svg'. Samples: 8123 Errors: 0"),
         ("a", "70% of the time is in `Invoice.customer` lazy loads: one query per row. Added `select_related(\"customer\")`; the export of 4411 went from 94 s to 11 s."))),
    (B, (("u", "the export zip for one customer is corrupted, 7zip says unexpected end of data"),
         ("a", "The zip was written while the worker was killed; there's no central directory. The task doesn't clean up partial zips on failure. I made it write to a temp name and rename on success."))),
    # dunning
    (B, (("u", "dunning emails have a broken unsubscribe link, goes to /unsubscribe/None"),
         ("a", "The template uses `customer.email_token` which is only set for accounts created after March. I generate it on first use now."))),
    (B, (("u", "test_schedule fails on the dst switch:\n\nE   AssertionError: expected 2026-10-25 08:00:00+01:00, got 2026-10-25 07:00:00+01:00"),
         ("a", "`schedule.py` adds `timedelta(days=n)` to an aware datetime and then normalises with the old offset. Using `zoneinfo` arithmetic on the local date fixes it."))),
    (B, (("u", "rename DunningStep.offset to days_after_due everywhere"),
         ("a", "Renamed in `schedule.py`, the admin, two migrations' data functions and the tests. The db column name stays (`db_column=\"offset\"`)."))),
    (B, (("u", "a customer got suspended although they paid yesterday. acct_5120"),
         ("a", "Their payment succeeded at 23:58 but the webhook was processed at 00:04, after the suspend job ran at 00:00 and read the invoice as open. "
               "The suspend job should re-check the payment intent before suspending; I added that check."))),
    (B, (("u", "where do we send the final notice cc? the billing contact field is empty for old accounts"),
         ("a", "`FinalNotice` cc's `account.billing_contact or account.owner`. For old accounts it falls back to the owner, so they still get it."))),
    (B, (("u", "can you make the dunning emails use the customer's language? all english now"),
         ("a", "Added `locale=customer.language` to the template render and the de/fr translations that already existed for invoices."))),
    # stripe client
    (B, (("u", "upgrade stripe-python from 7 to 10 in payments/stripe_client.py, what breaks?"),
         ("a", "Mainly the `stripe.error` → `stripe` exception namespace and `StripeObject` no longer being a dict. Four call sites in `stripe_client.py` and the test fakes."),
         ("$", ".venv/bin/pytest tests/payments -q", "..................                                         [100%]\n18 passed in 1.02s"))),
    (B, (("u", "StripeError: No such customer: 'cus_QX2...' in the logs for test mode accounts"),
         ("a", "Those accounts were copied from prod into staging with their live customer ids. The test-mode key can't see them. It's the staging data, not the code."))),
    (B, (("u", "mock stripe in the tests instead of hitting the sandbox, the suite takes 3 min"),
         ("a", "Added `tests/fakes/stripe_fake.py` (a `respx` router with the 9 endpoints we call) and a fixture. The payments tests take 6 s now."))),
    (B, (("u", "log the stripe request id on every failure pls"),
         ("a", "`_call()` now logs `exc.request_id` (or `resp.headers['Request-Id']`) with every `StripeError`."))),
    (B, (("u", "why do we create a new stripe client per request?"),
         ("a", "Historical: an early version set the api key per tenant. Nothing needs it now; a module-level client would reuse the connection pool."),
         ("u", "hmm ok, leave it for now, just curious"))),
    # currency
    (B, (("u", "GBP invoices show the € sign on the pdf"),
         ("a", "`format_money()` in the template ignores `invoice.currency` and uses the locale's symbol. Using `babel.numbers.format_currency(amount, currency, locale)` fixes it."))),
    (B, (("u", "add a currency column to the invoices list in the admin"),
         ("a", "Added `currency` to `list_display` and `list_filter` in `InvoiceAdmin`."))),
    (B, (("u", "what uses SUPPORTED_CURRENCIES besides checkout?"),
         ("$", "grep -rn SUPPORTED_CURRENCIES billing", "billing/currency.py:3:SUPPORTED_CURRENCIES = (\nbilling/checkout/forms.py:12:from billing.currency import SUPPORTED_CURRENCIES\nbilling/fx/rates.py:8:from billing.currency import SUPPORTED_CURRENCIES"),
         ("a", "Checkout's form and `fx/rates.py`, which only downloads rates for those currencies. Nothing else."))),
    (B, (("u", "KRW invoices have .00 on the pdf"),
         ("a", "The pdf formats every amount with two decimals. I made it use the currency's exponent from babel, so KRW and JPY print without decimals."))),
    (B, (("u", "how many JPY invoices did we issue last month? quick sql"),
         ("a", "```sql\nselect count(*) from invoices where currency = 'JPY' and issued_on >= date '2026-10-01' and issued_on < date '2026-11-01';\n```\nThat gives 214 on the replica."))),
    # numbering
    (B, (("u", "numbering.py test is flaky under pytest -n 4"),
         ("a", "The four workers share one database and the test asserts the exact next number. I made it assert that numbers are consecutive within the test's own invoices."))),
    (B, (("u", "credit notes use the same counter as invoices, is that intended? just asking, don't change anything"),
         ("a", "No, they have their own `CN-` counter in `numbering.py` (`kind=\"credit_note\"`). They only share the locking code."))),
    (B, (("u", "migration 0042 for the counter table fails on staging: relation \"invoice_counters\" already exists"),
         ("a", "Someone created the table by hand on staging while testing. `migrate billing 0042 --fake` after checking the columns match is the way out; prod is clean."))),
    (B, (("u", "what's the max invoice number we can have with the current format? someone asked in standup"),
         ("a", "The sequence part has six digits, so 999,999 per counter period. We issued about 48,000 last year."))),
    # proration
    (B, (("u", "proration tests use hard-coded 2024 dates, they break now that we check the period is current"),
         ("a", "Replaced the dates with `freezegun` and periods built relative to the frozen day."))),
    (B, (("u", "explain the proration math for annual plans, support has a ticket"),
         ("a", "For an upgrade on an annual plan: (new price − old price) × remaining days / days in the period, rounded per line. "
               "For the ticket: 240 EUR → 480 EUR with 100 of 365 days left gives 65.75 EUR."))),
    (B, (("u", "mypy complains about Optional everywhere in proration.py"),
         ("a", "`current_period` can be None for paused subscriptions. I added an early return for paused ones, so the rest of the function works on a non-optional period."))),
    (B, (("u", "sentry: ZeroDivisionError in proration for a plan change on the same day the period started"),
         ("a", "`days_in_period` is computed from `period.end - period.start` which is 0 for a same-day trial conversion. Using the plan's interval length instead fixes it."))),
    # idempotency
    (B, (("u", "IntegrityError duplicate key value violates unique constraint \"idempotency_keys_pkey\" when two requests race"),
         ("a", "Both requests check, find nothing and insert. Using `INSERT … ON CONFLICT DO NOTHING RETURNING` and reading the stored response when nothing is returned fixes the race."))),
    (B, (("u", "the nightly purge of idempotency keys takes 40 min and locks the table"),
         ("a", "It deletes with one `DELETE … WHERE created_at < …` and there's no index on `created_at`. Deleting in chunks of 10k by primary key keeps the locks short."))),
    (B, (("u", "do we store the response body with the idempotency key or just the status?"),
         ("a", "Both: `idempotency_keys.response` is the serialized body and status code, so a replayed request gets the original answer."))),
    # pdf
    (B, (("u", "pdf render is slow, 2s per invoice, profile it"),
         ("a", "Most of it is loading the fonts on every render. Caching the registered fonts at module level brings it to 0.3 s."))),
    (B, (("u", "the logo on the invoice pdf is blurry on retina screens"),
         ("a", "It's a 200px PNG drawn at 60mm. I replaced it with the SVG via `svglib`, so it's vector."))),
    (B, (("u", "page break splits the totals block from the last line item"),
         ("a", "Wrapped the last line and the totals table in a `KeepTogether` flowable in `render.py`."))),
    (B, (("u", "weasyprint vs reportlab, why did we pick reportlab? just curious"),
         ("a", "From the git history: weasyprint needed pango on the build image and rendered 3× slower for our templates in 2023. Nothing forces it now."),
         ("u", "ok, thanks"))),
    (B, (("u", "credit note pdf says 'Invoice' in the title"),
         ("a", "`render_credit_note()` reuses the invoice template and never sets `title`. Passing `title=_(\"Credit note\")` fixes it."))),
    # pagination
    (B, (("u", "cursor pagination returns the same invoice twice when two have the same created_at"),
         ("a", "The cursor only encodes `created_at`. Making it `(created_at, id)` and ordering by both makes pages stable."))),
    (B, (("u", "next_cursor is base64 of the id, can a client tamper with it?"),
         ("a", "They can decode and change it, but the query is still scoped to their account, so they can only skip around their own data. Signing it would stop even that."))),
    (B, (("u", "write tests for api/pagination.py edge cases, empty page and last page"),
         ("a", "Added tests: empty account → `data: []` and no `next_cursor`; exactly one page → no `next_cursor`; a cursor past the end → empty page."))),
    (B, (("u", "what's the default page size on /v1/customers? partner asks"),
         ("a", "`/v1/customers` uses its own `CustomerPagination` with `page_size = 25`; it doesn't go through `api/pagination.py`."))),
    # credits
    (B, (("u", "credits/apply.py KeyError: 'balance' for accounts created before the wallet migration"),
         ("a", "Those accounts have no wallet row. `apply_credits()` indexes `sources['balance']`; using `.get()` with a zero wallet fixes it."))),
    (B, (("u", "how do I issue a credit note by hand from the shell for a refund?"),
         ("a", "`python manage.py issue_credit_note --invoice INV-… --amount 12.50 --reason \"manual refund\"`; it goes through the same numbering and pdf path."))),
    (B, (("u", "promo credits: do they expire at midnight utc or in the customer's timezone?"),
         ("a", "UTC: `PromoCredit.expires_at` is stored as a UTC timestamp at midnight. The portal shows it in the browser's timezone, which is why some customers see 'expires at 01:00'."))),
    # fx
    (B, (("u", "ECB feed download fails with 404 for saturday"),
         ("a", "The ECB publishes no rates on weekends and holidays; `fetch_rates(day)` asks for the exact day. The lookup already falls back to the previous business day, so only the nightly download logs an error. I made it skip weekends."))),
    (B, (("u", "fx rates cache never expires in dev"),
         ("a", "Dev uses `LocMemCache` with `timeout=None` from `settings/dev.py`. Set a timeout there."))),
    (B, (("u", "add a management command to backfill missing fx rates for march"),
         ("a", "Added `manage.py backfill_fx --from 2026-03-01 --to 2026-03-31`; it downloads the ECB history file once and inserts missing days."))),
    # vat
    (B, (("u", "VIES check times out and the whole checkout fails"),
         ("a", "`validate_vat_id()` calls VIES synchronously with no timeout. I added a 3 s timeout and on timeout accept the id provisionally and re-check in a background task."))),
    (B, (("u", "vat number regex rejects greek numbers starting with EL"),
         ("a", "Greece uses `EL` instead of `GR` as prefix. Added `EL` to the patterns in `vat.py`."))),
    (B, (("u", "the reverse charge note has a typo in the german version"),
         ("a", "\"Steuerschuldnerschaft des Leistungsempfängers\" was missing an 's'. Fixed in `notes/reverse_charge.de.txt`."))),
    (B, (("u", "how is the 7% rate chosen for ebooks, is that in vat.py?"),
         ("a", "Yes: products with `tax_category=\"ebook\"` map to `REDUCED_7` for german consumers. Nothing else uses the reduced rate today."))),
    (B, (("u", "ruff F401 unused import in billing/tax/vat.py, ci is red on main"),
         ("a", "`from decimal import ROUND_HALF_EVEN` is unused since the last change. Removed."),
         ("$", ".venv/bin/ruff check billing", "All checks passed!"))),
    (B, (("u", "datev export: the tax column has 4 digits after the comma for some rows"),
         ("a", "The export writes `tax_amount` from the line table instead of the per-rate totals. Switched it to the invoice's tax summary, which is already rounded."))),
    # retention / gdpr
    (B, (("u", "the retention job deleted test fixtures in staging, the env guard didn't work"),
         ("a", "The guard checks `ENV == \"prod\"` to *skip* dry-run, so staging ran for real. Inverted the guard: it only deletes when `RETENTION_APPLY=1`."))),
    (B, (("u", "gdpr data export for a customer, which tables hold their data?"),
         ("a", "customers, contacts, invoices (name, address), payment_methods (last4 only), emails_sent, audit_log (ip addresses). I wrote `manage.py gdpr_export <account>`."))),
    (B, (("u", "audit_log is 120GB, what's in it"),
         ("a", "80% are `invoice.viewed` events from the portal. They have no retention rule of their own and fall under the default."))),
    # email
    (B, (("u", "reminder emails land in spam for outlook users"),
         ("a", "DKIM passes but the From domain has no DMARC record. Adding `_dmarc.tallyhq.com TXT \"v=DMARC1; p=none\"` is a start."))),
    (B, (("u", "move the email footer into a partial, it's copy-pasted in 9 templates"),
         ("a", "Created `emails/_footer.html` and included it in the 9 templates."))),
    (B, (("u", "the send queue shows emails scheduled for sunday, is that a bug?"),
         ("a", "Those are receipts, not reminders: receipts are sent immediately in the customer's timezone, and the queue view shows local time. Not a bug."))),
    # rate limit
    (B, (("u", "ratelimit.py uses an in-memory dict, that won't work with 4 gunicorn workers right?"),
         ("a", "Right, each worker counts separately. It was replaced by the redis version last month; the dict is only the fallback when `REDIS_URL` is unset (tests)."))),
    (B, (("u", "429 responses don't include Retry-After, the partner sdk retries immediately"),
         ("a", "Added `Retry-After` with the seconds until the bucket refills, and `X-RateLimit-Remaining`."))),
    (B, (("u", "load test the api with k6, what do we get"),
         ("$", "k6 run --vus 50 --duration 60s loadtest/invoices.js", "     http_req_duration..........: avg=41ms p(95)=118ms\n     http_reqs..................: 18240  303.8/s\n     checks.....................: 100.00%"),
         ("a", "About 300 requests/s at p95 118 ms with 50 virtual users on staging; no errors."))),
    # refunds
    (B, (("u", "refund webhook from stripe arrives before our refund row exists"),
         ("a", "We create the refund in stripe and then insert our row; the webhook can win. Inserting a `pending` row first and updating it from the response fixes the race."))),
    (B, (("u", "partial refunds show the full amount in the customer portal"),
         ("a", "The portal template shows `payment.amount` instead of `refund.amount`. Fixed."))),
    (B, (("u", "stripe fees on refunds, do we eat them or pass them on? what does the code do today"),
         ("a", "Today we eat them: `request_refund()` refunds the full payment amount and the fee shows up in the stripe balance report. There's no code passing it on."),
         ("u", "ok"))),
    # minimum charge / usage
    (B, (("u", "sentry: amount_too_small for invoice inv_8812, what's the amount?"),
         ("a", "0.32 EUR: a usage invoice with 16 API overage units at 0.02. It failed before the finalize path learnt to skip it; the retry job keeps retrying it. I cancelled the retry."))),
    (B, (("u", "usage metering double counts on the day the plan changes"),
         ("a", "The meter reads events with `>= period.start` for the new period and `<= period.end` for the old one, so the boundary second is counted twice. Made the end exclusive."))),
    # status / payments
    (B, (("u", "payment stuck in processing for 3 days, sepa debit"),
         ("a", "SEPA debits can stay `processing` for up to 5 business days. This one was created on friday, so it's within the normal window."))),
    (B, (("u", "what's the difference between Invoice.finalize() and Invoice.issue()"),
         ("a", "`finalize()` freezes the lines and assigns the number; `issue()` finalizes if needed, renders the pdf and sends the email. Only `issue()` has side effects outside the db."))),
    (B, (("u", "explain the flow from stripe webhook to invoice paid in 5 bullets for the onboarding doc"),
         ("a", "1. stripe posts `payment_intent.succeeded` to /webhooks/stripe\n2. the view verifies the signature and stores the event\n3. a task loads the intent and its invoice\n"
               "4. the invoice is marked paid and a receipt is queued\n5. our own `invoice.paid` webhook goes out to the customer's endpoints"))),
    # coupons
    (B, (("u", "coupon lookup is case sensitive, customers type summer24 in lowercase"),
         ("a", "`Coupon.objects.get(code=code)`; switched to `code__iexact` and normalised codes to upper case on save."))),
    (B, (("u", "expired coupons still apply if the invoice was drafted before expiry"),
         ("a", "The check uses the draft's `created_at`. It should use the finalisation time; changed `is_valid_for(invoice)` to use `now()` at finalize."))),
    (B, (("u", "coupon admin page 500s:\n\nTypeError: '<' not supported between instances of 'NoneType' and 'datetime.datetime'"),
         ("a", "Coupons without `expires_at` break the 'expiring soon' sort. Sorting with `F('expires_at').asc(nulls_last=True)` fixes it."))),
    (B, (("u", "how many partner coupons are active right now?"),
         ("a", "```sql\nselect count(*) from coupons where kind = 'partner' and (expires_at is null or expires_at > now());\n```\n37 on the replica."))),
    # nightly job
    (B, (("u", "nightly.py crashed at 02:14:\n\npsycopg.errors.SerializationFailure: could not serialize access due to concurrent update"),
         ("a", "The renewal and the dunning job both touched subscription 8812 at 02:14. The nightly job runs at REPEATABLE READ; retrying the failed unit once on `SerializationFailure` is the usual fix."))),
    (B, (("u", "how long did the nightly run take this week?"),
         ("$", "grep 'nightly.finished' /var/log/billing/jobs.log | tail -5", "2026-11-02T02:41:10Z nightly.finished invoices=9021 seconds=2480\n2026-11-03T02:39:55Z nightly.finished invoices=8990 seconds=2395\n2026-11-04T02:42:30Z nightly.finished invoices=9104 seconds=2550"),
         ("a", "About 40 to 43 minutes each night for ~9,000 invoices."))),
    (B, (("u", "add a --dry-run flag to the nightly invoice job"),
         ("a", "Added `--dry-run`: it runs each batch in a transaction that's rolled back and prints the totals per currency."))),
    (B, (("u", "the nightly job should skip accounts flagged as fraud, does it?"),
         ("a", "Yes, `due_subscriptions()` excludes `account__status=\"blocked\"`, and fraud sets that status."))),
    # export job / celery
    (B, (("u", "celery worker OOM during exports, memory goes to 6GB"),
         ("a", "The queryset is evaluated into a list before writing. Using `.iterator(chunk_size=2000)` keeps memory flat at ~300MB."))),
    (B, (("u", "SoftTimeLimitExceeded in sentry for the reports task (not exports). what's its limit?"),
         ("a", "`build_monthly_report` has `soft_time_limit=300` from the task decorator. It was exceeded by the October report for acct_0042, which has 900k lines."))),
    (B, (("u", "can exports run on a separate worker? just want to understand the queue setup"),
         ("a", "All billing tasks go to the `default` queue consumed by the 4 `worker` pods. There's no routing config today; `task_routes` would be the place."))),
    # tax misc / rounding questions
    (B, (("u", "rounding of negative amounts in credit notes: -0.005 goes to -0.01 or 0.00?"),
         ("a", "With `ROUND_HALF_UP`, Decimal rounds away from zero, so -0.005 becomes -0.01. That matches the invoice side."),
         ("u", "ok that's what I thought"))),
    (B, (("u", "tax report for Q3 is off by 12 cents total vs stripe's, find where"),
         ("a", "Stripe's report includes two refunds dated Oct 1 in UTC that we book on Sep 30 in Berlin time. The 12 cents are their tax. Our numbers are right for our booking date."))),
    # late fee
    (B, (("u", "late_fee.py test fails on leap years"),
         ("a", "It computes 'overdue days' as `(today - due).days % 365`. Using plain `.days` fixes it."))),
    (B, (("u", "do late fees show as a separate line item? what does the code do"),
         ("a", "Yes, `late_fee()` returns a `Line(kind=\"fee\")` that's added to the customer's next invoice, with the overdue invoice's number in the description."))),
    # sorting / dashboard
    (B, (("u", "invoice list endpoint is slow with sort=issue_date"),
         ("$", "psql billing -c \"explain analyze select * from invoices where account_id = 4411 order by issued_on desc limit 50\"",
          "Limit  (cost=0.43..91.20 rows=50) (actual time=812.4..812.5 rows=50 loops=1)\n  ->  Sort  (actual time=812.4 rows=50)\n        Sort Method: top-N heapsort  Memory: 40kB\nExecution Time: 812.901 ms"),
         ("a", "It sorts all 180k rows of the account. An index on `(account_id, issued_on desc)` makes it an index scan (2 ms)."))),
    (B, (("u", "the dashboard shows invoices in random order since the django upgrade"),
         ("a", "Django 5 no longer applies `Meta.ordering` in this `values()` query we use; the queryset needs an explicit `order_by`. I added the same `order_by` the dashboard queryset uses."))),
    # webhook signature / ops
    (B, (("u", "stripe cli webhook forwarding locally: signature verification fails with the whsec from the dashboard"),
         ("a", "`stripe listen` prints its own signing secret; the dashboard one is for the real endpoint. Put the `whsec_…` from `stripe listen` into `.env.local`."))),
    (B, (("u", "chrony isn't running on worker-3, how did that happen"),
         ("a", "The base image was rebuilt without the `chrony` package in September; only workers created since then are affected (worker-3 and worker-5)."))),
    # trials / seats
    (B, (("u", "trial emails say 'your trial ends in 0 days'"),
         ("a", "`days_left` uses `(trial_end - now).days`, which is 0 for the last 24 hours. Rounding up, and saying 'today' for 0, fixes it."))),
    (B, (("u", "how many trials converted last month? sql pls"),
         ("a", "```sql\nselect count(*) filter (where converted_at is not null) * 100.0 / count(*) from trials where ended_at >= '2026-10-01' and ended_at < '2026-11-01';\n```\n31.4% on the replica."))),
    (B, (("u", "seat count webhook from the auth service arrives twice"),
         ("a", "The auth service retries on any non-2xx and our handler returned 201 only after a slow query — their 5 s timeout fired first. Answering 202 right away and processing in a task fixes it."))),
    (B, (("u", "per-seat invoice shows seats: None for one account"),
         ("a", "The account has no seat-change log entries because it was imported. Falling back to the current member count when the log is empty fixes the None."))),
    # general
    (B, (("u", "bump django to 5.1 and run the tests"),
         ("$", ".venv/bin/pytest -q -x", "........................................................................ [ 61%]\n.............................................                            [100%]\n117 passed, 2 warnings in 14.2s"),
         ("a", "All 117 pass on Django 5.1; the two warnings are about `USE_L10N`, which I removed from settings."))),
    (B, (("u", "write docstrings for the public functions in billing/invoices"),
         ("a", "Added docstrings to the 14 public functions in `totals.py`, `numbering.py` and `finalize.py`."))),
    (B, (("u", "add a healthcheck endpoint"),
         ("a", "Added `/healthz` that checks the db and redis with a 1 s timeout each and returns 200 or 503."))),
    (B, (("u", "code review: PR #812 only changes the dunning email copy, anything off?"),
         ("a", "Copy looks good. The german version still says 'Zahlungserinnerung 1' in the subject although the body is the final notice."))),
    (B, (("u", "local postgres won't start:\n\nFATAL:  lock file \"postmaster.pid\" already exists\nHINT:  Is another postmaster (PID 812) running in data directory"),
         ("a", "PID 812 is not postgres anymore (the laptop rebooted). Removing `postmaster.pid` after checking no postgres is running fixes it."))),
    (B, (("u", "why do we have both billing/money.py and billing/currency.py"),
         ("a", "`money.py` holds the `Money` value type and arithmetic; `currency.py` holds the list of currencies and their properties. They were split during the fx circular import fix."))),
    (B, (("u", "fix all the utcnow deprecation warnings"),
         ("a", "Replaced 23 `datetime.utcnow()` calls with `datetime.now(UTC)`; two places compared naive and aware datetimes and are fixed too."))),
    (B, (("u", "the admin 'resend invoice' button sends to the old email after the customer changed it"),
         ("a", "It uses `invoice.billing_email`, copied at finalisation. Resend should use the customer's current address; changed it and kept the old one in the audit log."))),
    (B, (("u", "what does the `proforma` flag on Invoice do? can't find docs"),
         ("a", "A proforma invoice gets no number and no tax booking; it's used for bank transfer customers who need a document before paying. `finalize()` turns it into a real invoice."))),
    (B, (("u", "hmm the test db takes 20s to create, can we speed that up"),
         ("a", "Most of it is the 40 data migrations. `--reuse-db` with pytest-django keeps it between runs; in CI a template database would do the same."))),
    (B, (("u", "invoices for deleted accounts crash the monthly report: AttributeError: 'NoneType' object has no attribute 'country'"),
         ("a", "Deleted accounts keep their invoices with `customer=None`. The report now reads the country from the invoice's frozen address."))),
    # ---------------------------------------------------------------- snapctl
    (S, (("u", "snapctl upload fails with 'connection reset by peer' on big files"),
         ("a", "Single PUTs above 5GB are rejected by S3 and the connection gets reset. `upload.go` only switches to multipart above 8GB; lowering the threshold to 100MB fixes it."))),
    (S, (("u", "add a --verbose flag that prints each chunk upload"),
         ("a", "Added `--verbose`/`-v`: prints `chunk 12/80 uploaded (64MiB, 1.2s)` to stderr."))),
    (S, (("u", "the s3 backend tests hit real aws, can we mock it somehow"),
         ("a", "Switched the tests to a `gofakes3` server started per test; no credentials needed and the suite runs in 3 s."),
         ("$", "go test ./...", "ok  \tgithub.com/tallyhq/snapctl/internal/backend\t2.913s\nok  \tgithub.com/tallyhq/snapctl/internal/config\t0.011s"))),
    (S, (("u", "README section for snapctl restore is outdated"),
         ("a", "Updated it for the `--target-db` flag and the new checksum verification output."))),
    (S, (("u", "snapctl list is slow with 3000 snapshots in the bucket"),
         ("a", "It does a HEAD per object to read the metadata. Storing the metadata in the object key (or a manifest) would avoid 3000 requests; as a quick fix I parallelised the HEADs (16 at a time): 40 s → 3 s."))),
    (S, (("u", "goreleaser: build for arm64 too"),
         ("a", "Added `arm64` to `goarch` in `.goreleaser.yaml`; the release now has linux/darwin × amd64/arm64."))),
    (S, (("u", "panic in snapctl prune when the bucket is empty:\n\npanic: runtime error: index out of range [0] with length 0\n\ngoroutine 1 [running]:\nmain.prune(...)\n\t/home/maya/src/snapctl/prune.go:48"),
         ("a", "`prune()` reads `snaps[0]` to find the newest before checking the length. Returning early on an empty list fixes it."))),
    (S, (("u", "how does restore verify checksums?"),
         ("a", "Each chunk has a sha256 in the manifest; `restore` hashes while streaming and aborts on the first mismatch, before anything is written to the database."))),
    (S, (("u", "go vet: assignment copies lock value to c: config.Config contains sync.Mutex"),
         ("a", "`Load()` returns `Config` by value. Returning `*Config` fixes the vet warning; three call sites changed."))),
    (S, (("u", "shell completion for zsh pls"),
         ("a", "cobra generates it: `snapctl completion zsh > \"${fpath[1]}/_snapctl\"`. Added it to the README."))),
    (S, (("u", "cron mail says 'exit status 1' when the bucket doesn't exist, that's confusing"),
         ("a", "A missing bucket is `NoSuchBucket` from S3, which we wrap as a generic error. The message now says `bucket \"backups-prod\" does not exist` before exiting."))),
    (S, (("u", "what env vars does snapctl read? list them"),
         ("$", "grep -rhno 'SNAPCTL_[A-Z_]*' --include=*.go . | sort -u -t: -k3", "./config.go:22:SNAPCTL_BUCKET\n./config.go:23:SNAPCTL_REGION\n./config.go:24:SNAPCTL_ENDPOINT\n./config.go:25:SNAPCTL_PROFILE"),
         ("a", "Four: `SNAPCTL_BUCKET`, `SNAPCTL_REGION`, `SNAPCTL_ENDPOINT`, `SNAPCTL_PROFILE`."))),
    (S, (("u", "config.toml with the key 'retension' (typo) is silently ignored"),
         ("a", "The toml decoder ignores unknown keys. Using `toml.Decoder` with `DisallowUnknownFields()` turns it into `unknown key \"retension\" in config.toml`."))),
    (S, (("u", "restore of an old snapshot fails:\n\nzstd: unknown frame descriptor"),
         ("a", "That snapshot was written before compression existed; it's plain. `restore` should check the zstd magic number (`28 b5 2f fd`) and read uncompressed otherwise. Added that."))),
    (S, (("u", "benchmark upload throughput with 4 vs 16 parallel parts"),
         ("$", "go test -run xxx -bench BenchmarkUpload -benchtime 3x ./internal/upload", "BenchmarkUpload/parts=4-8     3   9120334112 ns/op   117.7 MB/s\nBenchmarkUpload/parts=16-8    3   4410923001 ns/op   243.4 MB/s"),
         ("a", "16 parts roughly doubles throughput on this link (243 vs 118 MB/s)."))),
    (S, (("u", "prune deleted the wrong snapshot in the test bucket!! look at prune.go"),
         ("a", "The weekly bucket is computed with `t.Weekday()` in local time while the daily ones use UTC, so a snapshot at 23:30 UTC sunday was counted in the wrong week. All buckets use UTC now."))),
    (S, (("u", "add --dry-run to prune"),
         ("a", "Added `--dry-run`: prints `would delete: …` and `would keep: …` with the rule that keeps each snapshot."))),
    (S, (("u", "golangci-lint errcheck failures in ci"),
         ("a", "Three unchecked `Close()` on response bodies and one on the temp file. Fixed them (the temp file one hid a write error)."))),
    (S, (("u", "snapctl version prints 'dev' in release builds"),
         ("a", "The ldflags in `.goreleaser.yaml` set `main.version` but the variable moved to `internal/buildinfo.Version`. Updated the ldflags path."))),
    (S, (("u", "windows build fails: undefined: syscall.Flock"),
         ("a", "The lock file uses `syscall.Flock`, which doesn't exist on windows. Moved it behind build tags with a `LockFileEx` version for windows."))),
    (S, (("u", "progress bar flickers in tmux"),
         ("a", "It redraws 60 times a second and tmux can't keep up. Throttled it to 10 redraws a second."))),
    (S, (("u", "how would encryption with age fit in the pipeline? not doing it now, just want to understand"),
         ("a", "It would sit between compression and chunking: dump → zstd → age → chunks, so the manifest checksums cover the ciphertext. Restore reverses it."),
         ("u", "ok, later"))),
    (S, (("u", "customer in NZ asks why the weekly snapshot shows up on monday for them"),
         ("a", "Weekly snapshots are taken sunday 22:00 UTC, which is monday morning in New Zealand. The listing shows UTC; `--local` shows their time."))),
    (S, (("u", "can restore write into a different database name?"),
         ("a", "Yes, `snapctl restore <id> --target-db other_name`; it creates the database if it doesn't exist."))),
    (S, (("u", "generate man pages with cobra"),
         ("a", "Added `snapctl docs man --dir ./man` using `cobra/doc.GenManTree`; goreleaser packs them in the archives."))),
)


# decoys that talk about what a decision chat built are dated after it (by the start of their first turn)
AFTER: dict[str, str] = {
    "the webhook payload": "webhook-attempts",
    "the retry queue dashboard": "webhook-attempts",
    "how does the export decide": "export-rows",
    "the export zip for one customer": "export-rows",
    "rename DunningStep.offset": "dunning-steps",
    "where do we send the final notice": "dunning-steps",
    "the nightly purge of idempotency": "idempotency-ttl",
    "do we store the response body": "idempotency-ttl",
    "what's the max invoice number": "invoice-numbers",
    "numbering.py test is flaky": "invoice-numbers",
    "migration 0042": "invoice-numbers",
    "credit note pdf says": "pdf-font",
    "KRW invoices have": "zero-decimal-rounding",
    "what uses SUPPORTED_CURRENCIES": "currencies",
    "write tests for api/pagination.py": "page-size",
    "credits/apply.py KeyError": "credit-order",
    "the reverse charge note": "reverse-charge",
    "datev export: the tax column": "tax-precision",
    "the send queue shows": "reminder-hours",
    "ratelimit.py uses an in-memory": "rate-limit",
    "429 responses don't": "rate-limit",
    "sentry: amount_too_small": "minimum-charge",
    "how many partner coupons": "partner-coupon",
    "how long did the nightly run": "nightly-batch",
    "add a --dry-run flag to the nightly": "nightly-batch",
    "late_fee.py test fails": "late-fee",
    "do late fees show": "late-fee",
    "chrony isn't running": "signature-tolerance",
    "trial emails say": "trial-pause",
    "per-seat invoice shows": "peak-seats",
    "cron mail says": "exit-codes",
    "config.toml with the key": "config-precedence",
    "restore of an old snapshot": "zstd-level",
    "prune deleted the wrong": "prune-retention",
    "add --dry-run to prune": "prune-retention",
    "panic in snapctl prune": "prune-retention",
    "customer in NZ asks": "prune-retention",
}


def _dates() -> list[datetime]:
    """A spread of moments from Sep 1 to Nov 30 for the decoys (deterministic), each after the decision it talks about."""
    when = {d.id: d.when for d in DECISIONS}
    moments = []
    for i, (_, turns) in enumerate(DECOYS):
        day = (i * 37) % 91
        month, offset = (9, day) if day < 30 else ((10, day - 30) if day < 61 else (11, day - 61))
        moment = at(month, offset + 1, 8 + (i * 5) % 10, (i * 13) % 60)
        built = next((when[d] for prefix, d in AFTER.items() if turns[0][1].startswith(prefix)), None)
        if built is not None and moment <= built:
            moment = min(built + timedelta(days=1 + i % 20), at(11, 30, moment.hour, moment.minute))
        moments.append(moment)
    return moments


def write_sessions() -> dict[str, str]:
    """Write every session file; the decisions' session files by decision id, relative to the corpus."""
    if OUT.exists():
        shutil.rmtree(OUT)
    sources: dict[str, str] = {}
    for n, decision in enumerate(DECISIONS, start=2001):  # ids apart from tests/evals/corpus's
        path = chat(n, decision.agent, decision.when, decision.project, decision.turns).write(OUT)
        sources[decision.id] = path.relative_to(CORPUS).as_posix()
    unmatched = [prefix for prefix in AFTER if not any(turns[0][1].startswith(prefix) for _, turns in DECOYS)]
    assert not unmatched, f"AFTER names no decoy: {unmatched}"
    for i, ((project, turns), when) in enumerate(zip(DECOYS, _dates(), strict=True)):
        chat(2101 + i, "codex" if i % 2 == 0 else "claude", when, project, turns).write(OUT)
    return sources


def _toml(value: object) -> str:
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return json.dumps(value)


def write_expectations(sources: dict[str, str]) -> None:
    """Write ``expectations.toml`` from ``DECISIONS``."""
    out = [
        "# Decisions made in conversation, and what a later session asks when it needs one (sessions/ is written",
        "# by tests/evals/write_decisions.py, and so is this file). Format: docs/eval.md.",
        "",
        "[thresholds]",
        "must_recall = 0  # this corpus has no must facts, only decisions",
        "question_recall_at_5 = 0",
        "paraphrase_recall_at_5 = 0.8",
    ]
    for name, cwd, remote in (BILLING, SNAPCTL):
        out += ["", f"# {'-' * 70} {name}", "[[projects]]", f"name = {_toml(name)}", f"remote = {_toml(remote)}", f"cwd = {_toml(cwd)}"]
        for d in (d for d in DECISIONS if d.project[0] == name):
            out += ["", "[[projects.decisions]]", f"id = {_toml(d.id)}", f"terms = {_toml(d.terms)}", f"said = {_toml(d.said)}",
                    f"question = {_toml(d.question)}", f"paraphrase = {_toml(d.paraphrase)}"]
            if d.replaces:
                out.append(f"replaces = {_toml(d.replaces)}")
            out += [f"from = {_toml(sources[d.id])}", f"note = {_toml(f'{d.agent} {d.when:%Y-%m-%d}: {d.note}')}"]
    (CORPUS / "expectations.toml").write_text("\n".join(out) + "\n", encoding="utf-8")


def main() -> None:
    """Write the session files and the expectations."""
    sources = write_sessions()
    write_expectations(sources)
    print(f"wrote {len(DECISIONS)} decision chats and {len(DECOYS)} decoys under {OUT}")


if __name__ == "__main__":
    main()
