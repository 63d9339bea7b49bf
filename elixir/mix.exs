defmodule Bench.MixProject do
  use Mix.Project

  # No dependencies: `mix compile` and `mix test` work offline.
  def project do
    [
      app: :bench,
      version: "0.1.0",
      elixir: "~> 1.14",
      start_permanent: false,
      deps: []
    ]
  end

  def application, do: [extra_applications: []]
end
