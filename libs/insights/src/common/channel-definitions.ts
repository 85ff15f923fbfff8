/**
 * PostHog's channel definitions (posthog/models/channel_type/channel_definitions.json, after GA4's
 * source and medium categories), the table its `lookup…Type` functions read for the
 * `$virt_initial_channel_type` and `$virt_initial_referring_domain_type` person properties:
 * which type a referring domain or utm_source is, and which channel it (or a utm_medium) makes
 * when paid or organic. Kept as data, grouped by type; channel-type.ts builds the lookups.
 */

/** The types of sites: each is its own domain type, `Paid <type>` when paid and `Organic <type>` when not. */
export const SITE_TYPES = ['Search', 'Social', 'Shopping', 'Video'] as const;

/** Sites (referring domains and utm_source values, app ids among them) by type, space separated. */
export const SITES: Record<(typeof SITE_TYPES)[number] | 'Email', string> = {
  Search:
    '360.cn alice andisearch.com aol search.aol.co.uk search.aol.com suche.aol.de ask ask.com www.ask.com auone ' +
    'sp-web.search.auone.jp avg babylon baidu baidu.com m.baidu.com www.baidu.com ru.beru.android biglobe ' +
    'biglobe.co.jp biglobe.ne.jp bing bing.com cn.bing.com bing.com.cn bing.net bingworld.com search.brave.com ' +
    'centrum.cz cnn coccoc.com com.coccoc.trinhduyet comcast conduit crowdsearch.net daum daum.net directsearch.io ' +
    'search.smt.docomo.ne.jp dogpile dogpile.com www.dogpile.com duckduckgo duckduckgo.com ecosia.org ' +
    'www.ecosia.org egerin.com www.egerin.com eniro exalead.com excite.com www.excite.com firmy.cz gigablast.com ' +
    'www.gigablast.com globo google google-play google.ad google.ae google.al google.am google.as google.at ' +
    'google.az google.ba google.be google.bf google.bg google.bi google.bj google.bs google.bt google.by google.ca ' +
    'google.cat google.cd google.cf google.cg google.ch google.ci google.cl google.cm google.cn google.co.ao ' +
    'google.co.bw google.co.ck google.co.cr google.co.id google.co.il google.co.in google.co.jp google.co.ke ' +
    'google.co.kr google.co.ls google.co.ma google.co.mz google.co.nz google.co.th google.co.tz google.co.ug ' +
    'google.co.uk google.co.uz google.co.ve google.co.vi google.co.za google.co.zm google.co.zw ' +
    'com.google.android.googlequicksearchbox google.com lens.google.com news.google.com play.google.com ' +
    'search.google.com google.com.af google.com.ag google.com.ar google.com.au google.com.bd google.com.bh ' +
    'google.com.bn google.com.bo google.com.br google.com.bz google.com.co google.com.cu google.com.cy ' +
    'google.com.do google.com.ec google.com.eg google.com.et google.com.fj google.com.gh google.com.gi ' +
    'google.com.gt google.com.hk google.com.jm google.com.kh google.com.kw google.com.lb google.com.ly ' +
    'google.com.mm google.com.mt google.com.mx google.com.my google.com.na google.com.ng google.com.ni ' +
    'google.com.np google.com.om google.com.pa google.com.pe google.com.pg google.com.ph google.com.pk ' +
    'google.com.pr google.com.py google.com.qa google.com.sa google.com.sb google.com.sg google.com.sl ' +
    'google.com.sv google.com.tj google.com.tr google.com.tw google.com.ua google.com.uy google.com.vc ' +
    'google.com.vn google.cv google.cz google.de google.dj google.dk google.dm google.dz google.ee google.es ' +
    'google.fi google.fm google.fr google.ga google.ge google.gg google.gl google.gm google.gr google.gy google.hn ' +
    'google.hr google.ht google.hu google.ie google.im google.iq google.is google.it google.je google.jo google.kg ' +
    'google.ki google.kz google.la google.li google.lk google.lt google.lu google.lv google.md google.me google.mg ' +
    'google.mk google.ml google.mn google.mu google.mv google.mw google.ne google.nl google.no google.nr google.nu ' +
    'google.pl google.pn google.ps google.pt google.ro google.rs google.ru google.rw google.sc google.se google.sh ' +
    'google.si google.sk google.sm google.sn google.so google.sr google.st google.td google.tg google.tl google.tm ' +
    'google.tn google.to google.tt google.vu google.ws hotbot.com www.hotbot.com incredimail juniorsafesearch.com ' +
    'www.juniorsafesearch.com junosearch.net www.junosearch.net kagi.com kiddle.co www.kiddle.co kidzsearch.com ' +
    'www.kidzsearch.com komo.ai kvasir search.lilo.org lycos lycos.com www.lycos.com go.mail.ru metacrawler.com ' +
    'www.metacrawler.com com.microsoft.amp.apps.bingnews com.microsoft.bing com.microsoft.sapphire.news.daily ' +
    'mojeek.com www.mojeek.com msn msn.com ntp.msn.com my-web-search.com najdi naver m.naver.com m.search.naver.com ' +
    'naver.com onesearch.com www.onesearch.com onet onet.pl pl.onet.onethd ai.perplexity.app perplexity.ai ' +
    'phind.com presearch.com presearch.io qwant lite.qwant.com qwant.com www.qwant.com rakuten ' +
    'jp.co.rakuten.android rakuten.co.jp websearch.rakuten.co.jp rambler mail.rambler.ru rambler.ru ru.rambler.mail ' +
    'ru.rambler.news search-results search-results-now.comtbbtyf search.xyz searchlock.com www.searchlock.com ' +
    'sevasearch.org seznam cz.seznam.sbrowser email.seznam.cz seznam.cz so.com sogou m.sogou.com sogou.com ' +
    'wap.sogou.com www.sogou.com startpage.com www.startpage.com startsiden startsiden.no com.swisscows.search ' +
    'swisscows.com tbbtyf terra tusksearch.com tut.by ukr search.ukr.net secureurl.ukr.net virgilio webcrawler.com ' +
    'www.webcrawler.com yahoo yahoo.co.jp ar.search.yahoo.com at.search.yahoo.com au.search.yahoo.com ' +
    'br.search.yahoo.com ca.search.yahoo.com ch.search.yahoo.com cl.search.yahoo.com co.search.yahoo.com ' +
    'com.yahoo.apps.yahooapp com.yahoo.frontpagecom.yahoo.weather com.yahoo.mobile.client.android.yahoo ' +
    'com.yahoo.onesearch com.yahoo.www.twa de.search.yahoo.com dk.search.yahoo.com es.search.yahoo.com ' +
    'espanol.search.yahoo.com fi.search.yahoo.com fr.search.yahoo.com hk.search.yahoo.com id.search.yahoo.com ' +
    'in.search.yahoo.com it.search.yahoo.com malaysia.search.yahoo.com mx.search.yahoo.com nl.search.yahoo.com ' +
    'no.search.yahoo.com nz.search.yahoo.com pe.search.yahoo.com ph.search.yahoo.com pl.search.yahoo.com ' +
    'se.search.yahoo.com sg.search.yahoo.com th.search.yahoo.com tr.search.yahoo.com tw.search.yahoo.com ' +
    'uk.search.yahoo.com us.search.yahoo.com vn.search.yahoo.com yahoo.com yandex yandex.by com.yandex.browser ' +
    'com.yandex.browser.broteam com.yandex.q com.yandex.qmobile com.yandex.rhythm com.yandex.searchapp ' +
    'com.yandex.yamb com.yandex.yango com.yandex.zen com.yandex.zen.logged yandex.com yandex.com.tr yandex.fr ' +
    'yandex.kz mail.yandex.ru ru.yandex.auth.client ru.yandex.blue.market ru.yandex.bus.tickets ru.yandex.disk ' +
    'ru.yandex.key ru.yandex.messenger ru.yandex.metro ru.yandex.mobile ru.yandex.mobile.bus.tickets ' +
    'ru.yandex.mobile.metro ru.yandex.mobile.music ru.yandex.mobile.navigator ru.yandex.mobile.navigator.sandbox ' +
    'ru.yandex.mobile.q ru.yandex.mobile.search ru.yandex.mobile.search.ipad ru.yandex.mobile.yamb ' +
    'ru.yandex.mobile.zen ru.yandex.mobile.zen-enterprise ru.yandex.music ru.yandex.rhythm ru.yandex.searchplugin ' +
    'ru.yandex.taxi ru.yandex.traffic ru.yandex.traffic.sandbox ru.yandex.weatherplugin ru.yandex.yandexmaps ' +
    'ru.yandex.yandexmaps.pr ru.yandex.yandexnavi ru.yandex.yandexnavi.pr ru.yandex.yango ru.yandex.ytaxi ' +
    'webmaster.yandex.ru yandex.ru zen.yandex.ru yandex.ua yandex.uz yep.com you.com ru.zen.android ' +
    'ru.zen.android.logged',
  Social:
    '43things 43things.com 51.com 5ch.net com.academia.academia academia.edu edu.academia.academia activerain ' +
    'activerain.com activeworlds activeworlds.com addthis addthis.com com.agens.android.vgsnarvei ' +
    'air.com.myheritage.mobile airg.ca allnurses.com allrecipes.com alumniclass alumniclass.com ameba.jp jp.ameba ' +
    'ameblo.jp americantowns americantowns.com ancestry.com forums.androidcentral.com anobii anobii.com com.anobii ' +
    'answerbag answerbag.com wiki.answers.com lifestream.aol.com aolanswers aolanswers.com artstation.com askubuntu ' +
    'askubuntu.com asmallworld.com com.asmallworld.android com.asmallworld.android_europa ' +
    'com.asmallworld.android_ganymede com.asmallworld.android_io net.asmallworld.ios com.atebits.tweetie2 athlinks ' +
    'athlinks.com com.automattic.jetpack awe.sm baby-gaga baby-gaga.com babyblog.ru badoo badoo.com com.badoo.badoo ' +
    'com.badoo.badoo.enterprise com.badoo.badoospp com.badoo.badoospp.enterprise com.badoo.mobile com.badoo.twa ' +
    'com.ballistiq.artstation bebo bebo.com beforeitsnews beforeitsnews.com bharatstudent bharatstudent.com biip.no ' +
    'biswap.org bit.ly blackcareernetwork.com blackplanet blackplanet.com blip.fm blog.com blogg.no bloggang.com ' +
    'blogger blogger.com draft.blogger.com blogher blogher.com bloglines bloglines.com blogs.com blogsome ' +
    'blogsome.com blogspot blogspot.com blogster blogster.com xyz.blueskyweb.app blurtit blurtit.com brightkite ' +
    'brightkite.com brizzly brizzly.com bsky.app com.burbn.instagram buzzfeed buzzfeed.com com.buzzfeed.android ' +
    'com.buzzfeed.buzzfeed buzznet buzznet.com cafemom cafemom.com camospace camospace.com canalblog.com care.com ' +
    'com.care.android.careview com.care.android.careview.providerapp com.care.enterprise com.care.iphone ' +
    'com.care.provider com.care.provider.enterprise care2 care2.com com.caringbridge.app caringbridge.org catster ' +
    'catster.com cbnt.io cellufun cellufun.com centerblog.net chegg.com com.chegg chicagonow chicagonow.com ' +
    'classmates classmates.com classquest classquest.com cocolog-nifty cocolog-nifty.com ' +
    'com.couchsurfing.couchsurfing com.couchsurfing.mobile.android couchsurfing.org cozycot cozycot.com ' +
    'forums.crackberry.com cross.tv crunchyroll com.crunchyroll.crunchyroid crunchyroll.com cyworld cyworld.com ' +
    'dailystrength.org deluxe.com deviantart com.deviantart.android.damobile com.deviantart.deviantart ' +
    'deviantart.com dianping dianping.com digg digg.com diigo diigo.com com.discord discord.com discordapp.gg ' +
    'disqus com.disqus.disqus disqus.com dogster dogster.com dol2day dol2day.com doostang doostang.com dopplr ' +
    'dopplr.com douban douban.com draugiem.lv lv.draugiem.app com.draugiem2 drugs-forum drugs-forum.com ' +
    'jp.co.dwango.nicoplayer dzone dzone.com edublogs.org elftown elftown.com epicurious.com everforo.com exblog.jp ' +
    'extole extole.com facebook apps.facebook.com business.facebook.com com.facebook.analytics ' +
    'com.facebook.analyticsapp com.facebook.atwork com.facebook.creatorstudio com.facebook.creatorstudio.master ' +
    'com.facebook.facebook com.facebook.katana com.facebook.lite com.facebook.madman com.facebook.messenger ' +
    'com.facebook.mobilehome com.facebook.moments com.facebook.orca com.facebook.pages.app com.facebook.scenes ' +
    'com.facebook.shoerack com.facebook.stella com.facebook.stellaapp com.facebook.stellaapp.master ' +
    'com.facebook.wakizashi com.facebook.workchat.local facebook.com free.facebook.com l.facebook.com ' +
    'lm.facebook.com m.facebook.com mobile.facebook.com touch.facebook.com web.facebook.com faceparty faceparty.com ' +
    'com.fandom.app fandom.com fanpop fanpop.com fark fark.com fb fb.me fc2 fc2.com feedspot blog.feedspot.com ' +
    'feministing feministing.com filmaffinity filmaffinity.com flickr com.flickr.android flickr.com flipboard ' +
    'flipboard.app flipboard.boxer.app flipboard.com folkdirect folkdirect.com foodservice foodservice.com ' +
    'fosstodon.org fotki fotki.com fotolog fotolog.com foursquare com.foursquare.playground foursquare.com ' +
    'friendfeed friendfeed.com fruehstueckstreff.org fubar fubar.com gaiaonline gaiaonline.com gamerdna ' +
    'gamerdna.com gather.com geni.com getpocket.com glassboard glassboard.com glassdoor glassdoor.com ' +
    'jp.gocro.smartnews.android godtube godtube.com goldenline.pl goldstar goldstar.com goo.gl blog.goo.ne.jp ' +
    'jp.ne.goo.blog.gooblog.pro oshiete.goo.ne.jp gooblog goodreads com.goodreads com.goodreads.goodreads ' +
    'com.goodreads.grdummy com.goodreads.kindle goodreads.com google+ com.google.android.apps.photos ' +
    'com.google.photos com.google.photos.enterprise com.google.spaces com.google.spaces.enterprise ' +
    'groups.google.com messages.google.com plus.google.com plus.url.google.com sites.google.com googlegroups.com ' +
    'googleplus govloop govloop.com gowalla gowalla.com gree.jp gulli.com gutefrage.net habbo habbo.com ' +
    'hachyderm.io com.hammerandchisel.discord hatena com.hatena.android.bookmark b.hatena.ne.jp d.hatena.ne.jp ' +
    'jp.ne.hatena jp.ne.hatena.bookmark-enterprise hi5 com.hi5.app hi5.com pro.homeadvisor.com hootsuite ' +
    'hootsuite.com houzz com.houzz.app com.houzz.pro houzz.com hoverspot hoverspot.com hr.com hubculture ' +
    'hubculture.com discover.hubpages.com hubpages.com hyves.net hyves.nl ibibo ibibo.com ' +
    'com.ibm.cloudvideo.android.broadcaster.app com.ibm.watsonmedia.videostreaming video.ibm.com ' +
    'com.ideashower.readitlater.pro identi.ca ig imageshack imageshack.com imageshack.us forums.imore.com imvu ' +
    'imvu.com infosec.exchange insanejournal insanejournal.com instagram com.instagram.android ' +
    'com.instagram.barcelona com.instagram.lite instagram.com l.instagram.com instapaper instapaper.com ' +
    'internations.org org.internations org.internations.internations.ios interpals.net intherooms intherooms.com ' +
    'irc-galleria.net is.gd italki com.italki.app italki.com jammerdirect jammerdirect.com jappy.com jappy.de ' +
    'com.jetpack.android com.jnj.mocospace.android com.joelapenna.foursquared org.joinmastodon.android kaboodle.com ' +
    'kakao kakao.com kakaocorp.com kaneva kaneva.com last.fm com.leaplock.colorfulballoons com.lenovo.anyshare.gps ' +
    'librarything librarything.com line line.me linkedin com.linkedin.android com.linkedin.android.injobs ' +
    'com.linkedin.android.learning com.linkedin.android.salesnavigator com.linkedin.coworkers ' +
    'com.linkedin.lighthouse com.linkedin.lighthouseenterprise com.linkedin.linkedin ' +
    'com.linkedin.linkedin.enterprise com.linkedin.pulse com.linkedin.pulse.enterprise com.linkedin.recruiter ' +
    'com.linkedin.recruiter.enterprise com.linkedin.zephyr com.linkedin.zephyr.enterprise linkedin.com ' +
    'copainsdavant.linternaute.com listal listal.com listography listography.com spaces.live.com livedoor.com ' +
    'livedoorblog livejournal com.livejournal.android livejournal.com com.ljblogs.app lnkd.in masto.ai ' +
    'mastodon.cloud mastodon.online mastodon.social mastodon.world mbga.jp com.medium.reader medium.com meetin.org ' +
    'meetup com.meetup com.meetup.organizer meetup.com meinvz.net meneame.net menuism.com messenger l.messenger.com ' +
    'messenger.com com.mix.android mix.com jp.mixi mixi.jp com.mixmedia.mix.appstore mocospace mocospace.com ' +
    'mouthshut mouthshut.com movabletype movabletype.com mstdn.jp mstdn.social mubi com.mubi com.mubi.go ' +
    'com.mubi.mubiapp mubi.com myanimelist.net myheritage myheritage.com mylife mylife.com mymodernmet ' +
    'mymodernmet.com myspace myspace.com blog.naver.com cafe.naver.com kin.naver.com m.blog.naver.com ' +
    'm.cafe.naver.com m.kin.naver.com jp.naver.line jp.naver.line.android jp.naver.line.rc netvibes netvibes.com ' +
    'newsshowcase nexopia forums.nexopia.com ngopost.org niconico jp.nicovideo.android nicovideo.jp nightlifelink ' +
    'nightlifelink.com ning ning.com com.oath.yahooapp com.oculus.facebook com.oculus.igvr odnoklassniki.ru ' +
    'ru.odnoklassniki.iphone odnoklassniki.ua ru.ok.android ru.ok.dating ru.ok.live okwave.jp oneworldgroup.org ' +
    'onstartups onstartups.com opendiary opendiary.com my.opera.com over-blog.com overblog.com paper.li ' +
    'partyflock.nl photobucket com.photobucket.iphone photobucket.com pinboard pinboard.in pingsta pingsta.com ' +
    'pinterest pinterest.at pinterest.ca pinterest.ch pinterest.cl pinterest.co.kr pinterest.co.uk ar.pinterest.com ' +
    'br.pinterest.com co.pinterest.com com.pinterest com.pinterest.brio com.pinterest.classic com.pinterest.lite ' +
    'com.pinterest.ota com.pinterest.twa cz.pinterest.com hu.pinterest.com id.pinterest.com in.pinterest.com ' +
    'nl.pinterest.com pinterest.com pl.pinterest.com tr.pinterest.com za.pinterest.com pinterest.com.au ' +
    'pinterest.com.mx pinterest.de pinterest.es pinterest.fr pinterest.it pinterest.jp pinterest.nz pinterest.ph ' +
    'pinterest.pt pinterest.ru pinterest.se pixiv.net playahead.se plurk com.plurk.android com.plurk.plurkgit ' +
    'plurk.com pocket.co com.pocket.team.a com.pocket.team.b com.pocket.team.review posterous posterous.com ' +
    'qapacity qapacity.com qzone.qq.com quechup quechup.com com.quoord.tapatalk com.quoord.tapatalk2 quora ' +
    'com.quora.android com.quora.app.mobile quora.com ru.ramblerco.livejournal ravelry ravelry.com reddit ' +
    'amp.reddit.com com.reddit.frontpage com.reddit.reddit old.reddit.com out.reddit.com reddit.com redux redux.com ' +
    'renren renren.com net.researchgate.shellapp net.researchgate.shellapp.office ' +
    'net.researchgate.shellapp.snapshot researchgate.net reunion reunion.com reverbnation reverbnation.com rtl.de ' +
    'ryze ryze.com salespider salespider.com scoop.it screenrant screenrant.com scribd com.scribd.app.reader0 ' +
    'com.scribd.app.reader0.docs com.scribd.docs com.scribd.ent.docs com.scribd.ent.iscribd com.scribd.iscribd ' +
    'scribd.com scvngr scvngr.com secondlife secondlife.com serverfault serverfault.com com.servicemagic.consumer ' +
    'com.servicemagic.consumer.adhoc com.servicemagic.pros com.servicemagic.pros.adhoc ' +
    'com.servicemagic.servicemagicconsumer com.servicemagic.servicemagicconsumer.adhoc ' +
    'com.servicemagic.servicemagicsp com.servicemagic.servicemagicsp-adhoc shareit shareit.lite com.sharekaro.app ' +
    'sharethis sharethis.com shvoong.com skype web.skype.com skyrock skyrock.com slashdot.org slideshare.net ' +
    'smartnews.com snapchat com.snapchat.android com.snapchat.android.master com.snapchat.shotgun ' +
    'com.snapchat.snapchat snapchat.com social sociallife.com.br socialvibe socialvibe.com spoke spoke.com spruz ' +
    'spruz.com com.ss.android.ugc.trill com.ss.iphone.ugc.ame ssense.android.prod ssense.com stackapps ' +
    'stackapps.com stackexchange com.stackexchange.marvin com.stackexchange.stackoverflow stackexchange.com ' +
    'stackoverflow stackoverflow.com stardoll.com stickam stickam.com studivz.net suomi24.fi superuser ' +
    'superuser.com sweeva sweeva.com t.co t.me tagged tagged.com com.taggedapp taggedmail taggedmail.com talkbiznow ' +
    'talkbiznow.com taringa.net techhub.social techmeme techmeme.com ph.telegra.telegraph org.telegram.messenger ' +
    'org.telegram.messenger.web org.telegram.telegram-ios org.telegram.telegramenterprise web.telegram.org tencent ' +
    'tencent.com threads.net www.threads.net org.thunderdog.challegram tiktok tiktok.com tinyurl tinyurl.com ' +
    'toolbox toolbox.com com.toyopagroup.picaboo travellerspoint travellerspoint.com tripadvisor ' +
    'com.tripadvisor.localpicks tripadvisor.com trombi trombi.com trustpilot tudou tudou.com tuenti tuenti.com ' +
    'tumblr tumblr.com tweetdeck tweetdeck.com twitter com.twitter.android com.twitter.android.lite ' +
    'com.twitter.twttr twitter.com twoo.com typepad typepad.com unblog.fr urbanspoon.com ushareit.com ushi.cn ' +
    'tv.ustream.ustream vampirefreaks vampirefreaks.com vampirerave vampirerave.com vg.no no.vgsport away.vk.com ' +
    'com.vk.admin com.vk.calls com.vk.clips com.vk.im com.vk.love com.vk.tv com.vk.vkvideo m.vk.com vk.com ' +
    'com.vkontakte.android vkontakte.ru wakoopa wakoopa.com wattpad wattpad.com forums.webosnation.com webshots ' +
    'webshots.com wechat wechat.com weebly weebly.com wefwef weibo weibo.com wer-weiss-was.de weread weread.com ' +
    'de.werweisswas whatsapp com.whatsapp com.whatsapp.w4b whatsapp.com net.whatsapp.whatsapp ' +
    'net.whatsapp.whatsappsmb wikihow.com wikitravel.org com.woocommerce.android com.woot.android.main ' +
    'com.woot.atlanta.ios com.woot.ios woot.com wordpress wordpress.com org.wordpress org.wordpress.android ' +
    'wordpress.org forums.wpcentral.com x.com xanga xanga.com xing xing.com yahoo-mbga.jp blog.yahoo.co.jp ' +
    'bookmarks.yahoo.co.jp chiebukuro.yahoo.co.jp messages.yahoo.co.jp answers.yahoo.com bookmarks.yahoo.com ' +
    'com.yahoo.frontpage com.yahoo.mobile.client.android.fantasyfootball com.yahoo.mobile.client.android.flickr ' +
    'com.yahoo.weather pulse.yahoo.com yammer com.yammer.v1 yammer.com news.ycombinator.com yelp yelp.co.uk ' +
    'com.yelp.android com.yelp.yelpiphone m.yelp.com yelp.com com.youku.international.iphone youroom.in zalo ' +
    'chat.zalo.me com.zhiliaoapp.musically com.zhiliaoapp.musically.ep zoo.gr zooppa zooppa.com',
  Shopping:
    'alibaba alibaba.com com.alibaba.intl.android.apps.poseidon com.alibaba.intl.android.apps.twa ' +
    'com.alibaba.sourcing com.alibaba.sourcing.ent m.alibaba.com message.alibaba.com offer.alibaba.com amazon ' +
    'aax-us-east.amazon-adsystem.com aax.amazon-adsystem.com cn.amazon.mshop.android amazon.co.uk amazon.com ' +
    'com.amazon.avod.thirdpartyclient com.amazon.kindle com.amazon.kindlefs com.amazon.mp3 ' +
    'com.amazon.mshop.android.business.shopping com.amazon.mshop.android.shopping ' +
    'in.amazon.mshop.android.business.shopping in.amazon.mshop.android.shopping com.audible.application ebay ' +
    'ebay.co.uk com.ebay.mobile ebay.com ebay.com.au ebay.de etsy com.etsy.android com.etsy.butter.sell_on_etsy ' +
    'com.etsy.butter.sell_on_etsy.enterprise etsy.com igshopping com.jadedpixel.pos com.jadedpixel.shopify ' +
    'mercadolibre com.mercadolibre com.mercadolibre.android.melistore mercadolibre.com mercadolibre.com.ar ' +
    'mercadolibre.com.mx com.mercadopago.wallet cr.shopping.naver.com cr2.shopping.naver.com m.shopping.naver.com ' +
    'msearch.shopping.naver.com shopping.naver.com s3.amazonaws.com shop.app shopify apps.shopify.com ' +
    'checkout.shopify.com com.shopify.arrive com.shopify.banking com.shopify.mobile com.shopify.pos ' +
    'partners.shopify.com shopify.com shopping nl.shopping.net no.shopping.net se.shopping.net uk.shopping.net ' +
    'shopzilla shopzilla.com com.simplycodes.mobile simplycodes.com stripe checkout.stripe.com ' +
    'com.stripe.android.dashboard stripe.com walmart com.walmart.android com.walmart.electronics one.walmart.com ' +
    'walmart.com order.shopping.yahoo.co.jp shopping.yahoo.co.jp store.shopping.yahoo.co.jp shopping.yahoo.com',
  Video:
    'crackle com.crackle.crackle-iphone crackle.com com.curiosity.curiositystream curiositystream ' +
    'curiositystream.com d.tube dailymotion com.dailymotion.dailymotion dailymotion.com com.disney.disneyplus ' +
    'disneyplus disneyplus.com com.google.android.apps.automotive.youtube com.google.android.apps.youtube.kids ' +
    'com.google.android.apps.youtube.music com.google.android.apps.youtube.music.pwa com.google.android.youtube ' +
    'com.google.android.youtube.tv com.google.ios.youtube com.google.ios.youtube.enterprise ' +
    'com.google.ios.youtube.release com.google.ios.youtubekids com.google.ios.youtubemusic ' +
    'com.google.ios.youtubemusic.enterprise com.google.ios.youtubeunplugged hulu com.hulu.iosbowie com.hulu.plus ' +
    'help.hulu.com hulu.com iq.com iqiyi com.iqiyi.i18n com.iqiyi.i18n.tv com.iqiyi.knowledge com.iqiyi.paopao ' +
    'com.iqiyi.player com.iqiyi.reader iqiyi.com viadeo.journaldunet.com justin.tv netflix com.netflix.mediaclient ' +
    'com.netflix.netflix com.netflix.ninja com.netflix.ssicapp help.netflix.com jobs.netflix.com netflix.com ' +
    'com.qiyi.hd com.qiyi.iphone com.qiyi.qypaopao com.qiyi.video com.qiyi.video.lite com.qiyi.video.pad ted ' +
    'com.ted.ted ted.com twitch blog.twitch.tv dashboard.twitch.tv id.twitch.tv m.twitch.tv player.twitch.tv ' +
    'tv.twitch tv.twitch.android.app tv.twitch.android.viewer twitch.tv utreon utreon.com veoh veoh.com vimeo ' +
    'com.vimeo com.vimeo.android.daytripper com.vimeo.android.videoapp com.vimeo.enterprise ' +
    'com.vimeo.universallinkz player.vimeo.com vimeo.com wistia wistia.com fast.wistia.net youku com.youku.hd ' +
    'com.youku.youku youku.com youtube m.youtube.com music.youtube.com youtube.com',
  Email:
    'mail.aol.co.uk com.aol.mobile.aolapp com.aol.mobile.aolclient mail.aol.com com.apple.mobilemail ' +
    'me.bluemail.mail com.easilydo.mail enterprise.aol.mobile.aolclient com.google.android.gm ' +
    'com.google.android.gm.lite com.google.gmail mail.google.com org.kman.aquamail outlook.live.com ru.mail.mail ' +
    'ru.mail.mailapp com.microsoft.office.outlook com.microsoft.outlooklite com.pingapp.app mail.proton.me ' +
    'ch.protonmail.android ch.protonmail.protonmail com.readdle.smartemail com.samsung.android.email.provider ' +
    'com.superhuman.mail com.superhuman.superhuman com.yahoo.aerogram com.yahoo.mobile.client.android.mail ' +
    'com.yahoo.mobile.client.android.mail.lite com.yahoo.mobile.client.android.nativemail mail.yahoo.com ' +
    'ru.yandex.mail',
};

/** Sources that name a channel rather than a site (no domain type, no paid channel): [source, organic channel]. */
export const CHANNEL_SOURCES: readonly (readonly [source: string, organic: string])[] = [
  ['e mail', 'Email'],
  ['e-mail', 'Email'],
  ['e_mail', 'Email'],
  ['email', 'Email'],
  ['firebase', 'Push'],
  ['sms', 'SMS'],
];

/** utm_medium values: [medium, paid channel, organic channel]. */
export const MEDIUMS: readonly (readonly [medium: string, paid: string | null, organic: string])[] = [
  ['affiliate', null, 'Affiliate'],
  ['app', null, 'Referral'],
  ['audio', null, 'Audio'],
  ['banner', 'Display', 'Display'],
  ['cpm', 'Display', 'Display'],
  ['display', 'Display', 'Display'],
  ['e mail', null, 'Email'],
  ['e-mail', null, 'Email'],
  ['e_mail', null, 'Email'],
  ['email', null, 'Email'],
  ['expandable', 'Display', 'Display'],
  ['interstitial', 'Display', 'Display'],
  ['link', null, 'Referral'],
  ['mobile', null, 'Push'],
  ['notification', null, 'Push'],
  ['partnership', null, 'Affiliate'],
  ['partnerships', null, 'Affiliate'],
  ['push', null, 'Push'],
  ['referral', null, 'Referral'],
  ['sm', 'Paid Social', 'Organic Social'],
  ['social', 'Paid Social', 'Organic Social'],
  ['social media', 'Paid Social', 'Organic Social'],
  ['social network', 'Paid Social', 'Organic Social'],
  ['social-media', 'Paid Social', 'Organic Social'],
  ['social-network', 'Paid Social', 'Organic Social'],
  ['video', 'Paid Video', 'Organic Video'],
];
