"""Secret-like queries of our own (made up, in the shapes people paste into a search box), for
the history's secrets filter: at least 100, of every kind the filter claims to catch."""

import itertools

PASSWORDS = ["hunter2", "Tr0ub4dor&3", "correcthorse9", "s3cr3t!", "qwerty123", "letmein77"]
SENTENCES = [
    "password {p}",
    "my password is {p}",
    "password for gmail {p}",
    "gmail password {p}",
    "pass: {p}",
    "pw: {p}",
    "pwd={p}",
    "passwd {p}",
    "new password is {p}",
    "chase password {p}",
    "password: {p}",
    "wifi password is {p}",
]
PINS = [
    "my pin is 1234",
    "bank pin code 4821",
    "pin 0000",
    "atm pin is 9911",
    "pin number 4821",
    "ssn 078-05-1120",
    "078 05 1120",
    "078051120",
    "social 219-09-9999",
    "my ssn is 078051120",
    "cvv 123",
    "cvv2 456",
    "account 12345678",
    "acct no 998877",
    "routing number 021000021",
]
CARDS = [
    "4111 1111 1111 1111",
    "4111-1111-1111-1111",
    "4111  1111  1111  1111",
    "4111.1111.1111.1111",
    "4111111111111111",
    "visa 4012888888881881",
    "5555 5555 5555 4444",
    "378282246310005",
    "6011 1111 1111 1117",
    "card 3530 1113 3330 0000",
]
IBANS = [
    "GB82 WEST 1234 5698 7654 32",
    "GB82WEST12345698765432",
    "DE89 3704 0044 0532 0130 00",
    "iban fr14 2004 1010 0505 0001 3m02 606",
    "NL91ABNA0417164300",
]
TOKENS = [
    "AKIAIOSFODNN7EXAMPLE",
    "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",
    "xoxb-2345678901-1234567890123-abcdefghijklmnopqrstuvwx",
    "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    "AIzaSyA1234567890abcdefghijklmnopqrs",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abc123def456ghi789",
    "-----BEGIN RSA PRIVATE KEY-----",
    "api key a1b2c3d4e5",
    "token 9f8e7d6c5b4a",
    "bob@example.com:hunter2",
    "https://user:pw@example.com/login",
    "secret 7hG3kL9p",
    "access key AKIAI44QH8DHBEXAMPLE",
]


def secret_queries():
    """Every secret-like query of the set."""
    said = [s.format(p=p) for s, p in itertools.product(SENTENCES, PASSWORDS)]
    return said + PINS + CARDS + IBANS + TOKENS
