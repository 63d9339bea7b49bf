"""The ladder plot's rate labels: a knee's bisected steps keep their ticks
without labels that overlap (ten percent apart on a log axis)."""

from harness.present.plots.servers import rate_labels


def test_bisected_rates_close_to_a_labelled_one_go_unlabelled() -> None:
    rates = [25, 50, 100, 200, 400, 800, 1113, 1343, 1476, 1600, 3200]
    assert rate_labels(rates) == ["25", "50", "100", "200", "400", "800", "1,113", "", "1,476",
                                  "", "3,200"]
