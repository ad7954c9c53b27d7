"""The pretraining-payoff study on one GPU (issue 46, item 4): `prepare` here, `study` on the device. See README.md."""
