"""The app's empty list says the client's reason (Answer.why, from
mtn_keras/client/reasons.py), not wording of its own."""

from textual.app import App

import mtn_keras
from mtn_tui.model import LocalModel
from mtn_tui.widgets.suggestion_list import SuggestionList


def test_the_app_model_answers_the_clients_why_with_an_empty_list(fake_model):
    app_model = LocalModel(fake_model)
    assert app_model.suggestions(["cheap flights"]).why == ""
    withheld = app_model.suggestions(["nude pics"])
    assert withheld == []
    assert withheld.why == "The model's 3 suggestions were all withheld as sexually explicit."
    assert withheld.why == mtn_keras.load(str(fake_model)).suggest(["nude pics"]).why
    app_model.explicit_shown = True  # mtn-tui --explicit
    assert app_model.suggestions(["teen porn"], "!").why == (
        "“!” holds no word, so it is read as nothing typed, and the model's 3 suggestions were "
        "all withheld as unsafe."
    )


class ListOnly(App):
    def compose(self):
        yield SuggestionList(id="suggestions")


async def test_an_empty_list_shows_the_reason_it_is_given():
    app = ListOnly()
    async with app.run_test() as pilot:
        options = app.query_one(SuggestionList)
        options.show_none("labradood", "The session holds no query with words.")
        await pilot.pause()
        assert str(options.get_option_at_index(0).prompt) == (
            "The session holds no query with words."
        )
        options.show_none("labradood")
        await pilot.pause()
        assert str(options.get_option_at_index(0).prompt) == (
            "No known query starts like “labradood”."
        )
