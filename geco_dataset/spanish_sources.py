"""Where every released Spanish file comes from: its pinned upstream commit and path, and its SHA-256.

Upstream: the archived GitHub repository of Garrido-Muñoz et al. (2023). Each file below was verified byte-identical
to the copy the project was developed on (``shared/data/spanish/SHA256SUMS``); the local folder is optional, a
machine without it downloads the same bytes from these URLs and refuses any other bytes.
"""

from __future__ import annotations

SPANISH_REPO = "IsGarrido/Evaluating-Gender-Bias-in-Spanish-Deep-Learning-Models"
SPANISH_HEAD_COMMIT = "ea99475d30673a344a25687bfbfc2e3f1c6b06ca"  # the archived HEAD
SPANISH_OLD_COMMIT = "8ccd07085c98cd6fe0a9d48790aab2f9b31b8ad2"  # the 2022 files, removed before HEAD

# file stems of the 20 models' published predictions (the Hub id with "/" replaced by "_")
SPANISH_PREDICTION_MODELS: tuple[str, ...] = (
    "BSC-TeMU_RoBERTalex",
    "BSC-TeMU_roberta-base-bne",
    "BSC-TeMU_roberta-large-bne",
    "Geotrend_bert-base-es-cased",
    "Geotrend_distilbert-base-es-cased",
    "MMG_mlm-spanish-roberta-base",
    "Recognai_distilbert-base-es-multilingual-cased",
    "amine_bert-base-5lang-cased",
    "bert-base-multilingual-cased",
    "bertin-project_bertin-base-gaussian",
    "bertin-project_bertin-base-gaussian-exp-512seqlen",
    "bertin-project_bertin-base-random",
    "bertin-project_bertin-base-random-exp-512seqlen",
    "bertin-project_bertin-base-stepwise",
    "bertin-project_bertin-base-stepwise-exp-512seqlen",
    "bertin-project_bertin-roberta-base-spanish",
    "dccuchile_bert-base-spanish-wwm-cased",
    "dccuchile_bert-base-spanish-wwm-uncased",
    "flax-community_alberti-bert-base-multilingual-cased",
    "mrm8488_electricidad-base-generator",
)

# released file (path in the release layout) -> (commit, path in the upstream repository)
SPANISH_UPSTREAM: dict[str, tuple[str, str]] = {
    "templates/sentences.tsv": (SPANISH_HEAD_COMMIT, "assets/data/FillTemplate/sentences.tsv"),
    "templates/sentences_2022-08.tsv": (SPANISH_OLD_COMMIT, "data/FillTemplate/sentences.tsv"),
    "templates/models.tsv": (SPANISH_HEAD_COMMIT, "assets/data/FillTemplate/models.tsv"),
    "lexicons/supersenses_top10.json": (SPANISH_HEAD_COMMIT, "assets/data/EvaluateCategories/Yulia10.json"),
    "lexicons/supersenses_top29.json": (SPANISH_HEAD_COMMIT, "assets/data/EvaluateCategories/Yulia.json"),
    "lexicons/supersenses_2022-08.tsv": (SPANISH_OLD_COMMIT, "data/CategoriasAdjetivos/yulia.tsv"),
    "lexicons/visibility_polarity.tsv": (SPANISH_OLD_COMMIT, "data/CategoriasAdjetivos/polaridad_visibilidad.tsv"),
    "lexicons/wiggins_accept_reject_love_status.tsv": (SPANISH_OLD_COMMIT, "data/CategoriasAdjetivos/polaridad_foa_foa.tsv"),
    "lexicons/cess_adjectives.json": (SPANISH_OLD_COMMIT, "data/Adjectives/cess_spanish_adjectives.json"),
}
for _stem in SPANISH_PREDICTION_MODELS:
    SPANISH_UPSTREAM[f"predictions/top10/{_stem}.tsv"] = (
        SPANISH_HEAD_COMMIT, f"assets/result/Spanish_Genre_10/FillTemplate/{_stem}.tsv"
    )
    SPANISH_UPSTREAM[f"predictions/top29/{_stem}.tsv"] = (
        SPANISH_HEAD_COMMIT, f"assets/result/Spanish_Genre/FillTemplate/{_stem}.tsv"
    )

# released file -> SHA-256 (from shared/data/spanish/SHA256SUMS)
SPANISH_SHA256: dict[str, str] = {
    "lexicons/cess_adjectives.json": "fdcee5772ccd84f5deee6077e9b305269b1b627bd2913028782ffeadb413ac22",
    "lexicons/supersenses_2022-08.tsv": "2fe560d83b2ced36cb4c0616a1e8ca1e9c602e56f28178d23d99742c44cf3bf1",
    "lexicons/supersenses_top10.json": "5af0755b08ba8dcbe56993b48b217d08f828f4c5d4aeb19482f555b78b777696",
    "lexicons/supersenses_top29.json": "970fe649447b24c66e0f61af1a18a6b18a1ae63873d98ba5d3d6c5aa6e6e7881",
    "lexicons/visibility_polarity.tsv": "d50dd0d438d411f404b4dd03901c2c8ce230eb9705a7c79507c0e5f2bb47d219",
    "lexicons/wiggins_accept_reject_love_status.tsv": "42b76c8db0549b5048d0e22e61f83d4be18e9bd031aa1edb83335b8dc289b90f",
    "predictions/top10/BSC-TeMU_RoBERTalex.tsv": "f37a2657af3fd0aa40789f93bd9d1e83b9da0b21c80b306fab8b678b4fb9c733",
    "predictions/top10/BSC-TeMU_roberta-base-bne.tsv": "3b0c8054393e32e741444d494dc63aed8c4bcbdd55fd5960df023ebdef8fb1ef",
    "predictions/top10/BSC-TeMU_roberta-large-bne.tsv": "41e87c7444d02761cda11f21de1050e0145e204342284130d5b1c5a19c2cd619",
    "predictions/top10/Geotrend_bert-base-es-cased.tsv": "8f7b4444925586ce162bab1fdcf81bc62278d1d9da6ce152051cb16d9a01b809",
    "predictions/top10/Geotrend_distilbert-base-es-cased.tsv": "a11519500598972e69bf6b882d5eb41f7a649ea919341b1eca46f26e1b371e48",
    "predictions/top10/MMG_mlm-spanish-roberta-base.tsv": "042ea5fe58927e36c0a67cc1ab82f86717e7935edaf4613abed45de727d4dae3",
    "predictions/top10/Recognai_distilbert-base-es-multilingual-cased.tsv": "8d7449819677acf8970d1b051cc992f644ca1076de68cc9b8c1f486ee2d72d52",
    "predictions/top10/amine_bert-base-5lang-cased.tsv": "56b3381a278019f6af654cf04a730a0ab832040a1109cbe855961a700556b7f8",
    "predictions/top10/bert-base-multilingual-cased.tsv": "e655b8ab959dd3d919418e95d2636cd65d8670be8dc2934af75b3332270fd05b",
    "predictions/top10/bertin-project_bertin-base-gaussian-exp-512seqlen.tsv": "49515d960d63d055fd1e9b1635cd07acc8394ad250a7d1afa90ec0d6e8758001",
    "predictions/top10/bertin-project_bertin-base-gaussian.tsv": "8ac2d2e5441b974b36fccc7cd4d4fe880636c08038f3b58bdb0f05a2b69f8cb6",
    "predictions/top10/bertin-project_bertin-base-random-exp-512seqlen.tsv": "5c597a68f76a9cc3715f22daa4c9f9bbe33010e327cba004e68967de240d04db",
    "predictions/top10/bertin-project_bertin-base-random.tsv": "ef4badb3fd64c91a2de28af98be570d65448ab1848b9a5b54f132102329f187e",
    "predictions/top10/bertin-project_bertin-base-stepwise-exp-512seqlen.tsv": "76a3653706e26a6c471aad4896100d11e30baeb6b053b8b218ba928738db0b80",
    "predictions/top10/bertin-project_bertin-base-stepwise.tsv": "bcbea6c3faa4db81c045ff321104f9b204339f1372da173e75136d0c4360b9e6",
    "predictions/top10/bertin-project_bertin-roberta-base-spanish.tsv": "f4419362b54c15bf9fe4b21243931f24f9e72867c678d587c12915154512b459",
    "predictions/top10/dccuchile_bert-base-spanish-wwm-cased.tsv": "950ab9b8e6c55d20533c32111e91dba7996bd4e1ba667802c23dab0e277c2be6",
    "predictions/top10/dccuchile_bert-base-spanish-wwm-uncased.tsv": "7059038e70969f3d544c69605e61b8d72d777c8a1ccf5eb29820e7cbf5e196d0",
    "predictions/top10/flax-community_alberti-bert-base-multilingual-cased.tsv": "4cbc16853ef12506e87372b74bb8dda51208b5813445aee6add8a82d0ecb31e2",
    "predictions/top10/mrm8488_electricidad-base-generator.tsv": "4c85caf82e1f86331794c42c36ee92561f6d5da4a121182e68f4672efb7c9568",
    "predictions/top29/BSC-TeMU_RoBERTalex.tsv": "8db12892438953f639e1073b116637c2e3bf6de22aad155f3381f1e74b36d64b",
    "predictions/top29/BSC-TeMU_roberta-base-bne.tsv": "7880db66fec817138dbffe378d1573bf42fd6a1059606f6e5351b32c3bb33122",
    "predictions/top29/BSC-TeMU_roberta-large-bne.tsv": "f881112b60482c3e4a05d5830550b222ba88e39d7ba1bd9f44167318ad7a5eef",
    "predictions/top29/Geotrend_bert-base-es-cased.tsv": "a021a77fa318d5f02dec27424fee4c4d76b1ad1aa1d308b6a9cad27840291b05",
    "predictions/top29/Geotrend_distilbert-base-es-cased.tsv": "c07fcd7ddeda5e560f3bdca554fdd7ce53821e479c162582a71d4b0adedad6ef",
    "predictions/top29/MMG_mlm-spanish-roberta-base.tsv": "7dd23929c396e3dc835e909da7860e2c6623d5cb9ad21d118a7dd043bff28e5d",
    "predictions/top29/Recognai_distilbert-base-es-multilingual-cased.tsv": "4cf70bfafbcae1ce4e6820989edb2db89911354bdf59949e840ff3a2483e6f95",
    "predictions/top29/amine_bert-base-5lang-cased.tsv": "60d7fb8a678535334dfb9cc1ba8ce0c2654846e9104e2b10ad3182ef2e9aaded",
    "predictions/top29/bert-base-multilingual-cased.tsv": "ef2f17476a05ad0e136f55c4272b86815f1db7442d0fbf71bb3f9be11606b99c",
    "predictions/top29/bertin-project_bertin-base-gaussian-exp-512seqlen.tsv": "5fd21bfa712c03b100b5b115f60651f6f9401f2fde246d5aa97ed53b8e2483e1",
    "predictions/top29/bertin-project_bertin-base-gaussian.tsv": "0dec4c7bde5766e6802c72083ef025de2ced1fd0d5695a219c9611f4a5d1eb68",
    "predictions/top29/bertin-project_bertin-base-random-exp-512seqlen.tsv": "b407d8c3dd96637c2a1c22034e67ad8ea78c6900ec0041c253e601d5fcc2214d",
    "predictions/top29/bertin-project_bertin-base-random.tsv": "294995a0617766af8db381d282cc31acc48d8a6430d597419d233356de771fb8",
    "predictions/top29/bertin-project_bertin-base-stepwise-exp-512seqlen.tsv": "041b353b351efed9b8ff82cb6b8981411cb75335a801af98d6fadfa8463f1ed1",
    "predictions/top29/bertin-project_bertin-base-stepwise.tsv": "d0886cbd5781f17905c9ea2cfd0c68be47973023bd84cd51509f3ee629d138e5",
    "predictions/top29/bertin-project_bertin-roberta-base-spanish.tsv": "4143ca62cbb6d9f869452115ca2b41e19659f532bdfb83290b94007e1475a34f",
    "predictions/top29/dccuchile_bert-base-spanish-wwm-cased.tsv": "eba9076b117884781db2c2330cfb88d35593af905781132faf6c3756579db4fe",
    "predictions/top29/dccuchile_bert-base-spanish-wwm-uncased.tsv": "657af38139604439bb1928e2be62fbf035a90137d7921a394578ebe686ef82e8",
    "predictions/top29/flax-community_alberti-bert-base-multilingual-cased.tsv": "2b9d2f2d97104a230a4e5cd0205f607d528311e824a1c0b490a3a3b520d368e7",
    "predictions/top29/mrm8488_electricidad-base-generator.tsv": "e9a1c6d259f3467831aaa7fe34db3fe89d69579a25b33c5374edd5da42400495",
    "templates/models.tsv": "5c6c3f1d87b6c1c8fb2cbb72ea40e32c4a7bb54c10f7a3dfd796fd2ee51f1a4d",
    "templates/sentences.tsv": "893bba7f931905cc9ea65f17ee5b704248bca3844b49fae1cbd5d6ae99fb792e",
    "templates/sentences_2022-08.tsv": "0e47400c2d8601190b8db06425379e183ea988daf20b80bf228932c2f5c84497",
}
