"""The reference sample of the similarity calibration: sentences on unrelated topics.

Our own sentences, written for this purpose, in English and in Chinese: each is about a
different everyday topic (pets, travel, budgets, code, health, cooking, …) and in the
styles memories and tasks take (statements, questions, requests). Any two of the same
language are unrelated; their cosine is what an embedding model gives to "nothing in
common" (:mod:`hy_memory_langgraph.models.calibration`). Changing the sample changes
:data:`REFERENCE_VERSION`, which invalidates stored calibrations.
"""

from __future__ import annotations

from typing import Final

REFERENCE_VERSION: Final = "unrelated-v1"

REFERENCE_SENTENCES: Final[dict[str, tuple[str, ...]]] = {
    "en": (
        "I adopted a grey kitten from the shelter last spring.",
        "Our quarterly budget review moved to Thursday afternoon.",
        "The train to Edinburgh leaves from platform nine at seven.",
        "How do I rotate the API keys for the billing service?",
        "She takes her coffee black, with no sugar.",
        "The basement flooded after the heavy rain on Sunday.",
        "My knee still hurts when I run more than five kilometres.",
        "Please translate the contract summary into Spanish by Friday.",
        "We are saving for a deposit on a flat near the river.",
        "The unit tests fail because the mock returns None.",
        "He is learning the violin with an online teacher.",
        "Remind me to renew my passport before it expires in March.",
        "The wedding reception will be held in a barn outside town.",
        "Tomatoes need more sunlight than the balcony gets in winter.",
        "Export the sales figures for the northern region as a spreadsheet.",
        "Our daughter starts primary school in September.",
        "The laptop battery drains within two hours since the update.",
        "I finished reading a history of the Byzantine empire.",
        "Book a table for four at the Thai restaurant on Saturday.",
        "The football match was called off because of the snow.",
        "Which vaccine does the dog need before the trip abroad?",
        "The printer on the third floor keeps jamming on thick paper.",
        "My grandmother taught me to bake bread without yeast.",
        "Migrate the user table to the new database schema tonight.",
    ),
    "zh": (
        "我上周在公园里捡到一只受伤的小鸟。",
        "下个月的团队预算会议改到周三上午。",
        "去杭州的高铁早上八点从虹桥站出发。",
        "怎么给支付服务更换访问凭证？",
        "她喝茶从来不加糖，只喝绿茶。",
        "昨晚的大雨让地下室进了水。",
        "我跑步超过五公里膝盖就会疼。",
        "请在周五之前把合同摘要翻译成英文。",
        "我们在攒钱准备买一套靠近地铁的房子。",
        "单元测试失败是因为模拟对象返回了空值。",
        "他正在跟网上的老师学拉小提琴。",
        "提醒我在三月份护照过期前去续签。",
        "婚礼的宴席安排在城外的一个农庄里。",
        "冬天阳台的光照不够番茄生长。",
        "把华北区的销售数据导出成表格。",
        "我们的女儿九月份开始上小学。",
        "系统更新以后笔记本电池两个小时就没电了。",
        "我刚读完一本关于唐朝历史的书。",
        "帮我订周六晚上四个人的火锅位子。",
        "因为下雪，今天的足球比赛取消了。",
        "出国之前狗需要打哪种疫苗？",
        "三楼的打印机一遇到厚纸就卡纸。",
        "外婆教我用老面发酵做馒头。",
        "今晚把用户表迁移到新的数据库结构。",
    ),
}
